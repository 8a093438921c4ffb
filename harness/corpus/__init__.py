"""How the corpus is kept: what a case is, its loading and its check against the schema (:mod:`.case`), the
releases each program builds on (:mod:`.support`, behind ``min_warp``), a new case's starting point
(:mod:`.scaffold`), the register of every case id ever used (:mod:`.index`, ``corpus/INDEX.md``), the check that
a converted case's script and adapter build the same Problem (:mod:`.conversion`) and the generated tier of
labelled mutants (:mod:`.mutate`).
"""
