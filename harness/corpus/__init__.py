"""How the corpus is kept: the releases each program builds on (:mod:`.support`, behind ``min_warp``), a new
case's starting point (:mod:`.scaffold`), the register of every case id ever used (:mod:`.index`,
``corpus/INDEX.md``), the check that a converted case's script and adapter build the same Problem
(:mod:`.conversion`) and the generated tier of labelled mutants (:mod:`.mutate`).

What a case is, its loading and checking against the schema, is ``harness/case.py`` at the package root for
now: the engine's fit (``engines/fit.py``) imports it, and that file's bytes are part of every built-in
engine's stored key (``store.CODE_PARTS``), so moving it waits for the next change that re-keys the stored
data anyway.
"""
