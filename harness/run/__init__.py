"""What surrounds a run of engines over the corpus: scoring diagnoses against the expectations
(:mod:`.scoring`), release matrices and upgrade audits (:mod:`.matrix`), the preflight of an outside engine
(:mod:`.preflight`) and the SQLite history of every run (:mod:`.history`).

The runner itself (``harness/runner.py``), its executors (``harness/executors.py``) and the result store
(``harness/store.py``) sit at the package root for now: ``validate.py`` imports them, and its bytes are part
of every built-in engine's and every validation's stored key (``store.CODE_PARTS``, ``store.ORACLE_PARTS``),
so moving them waits for the next change that re-keys the stored data anyway.
"""
