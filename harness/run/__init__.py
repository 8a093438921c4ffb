"""Running engines over the corpus: the plan and the run (:mod:`.runner`), where work items run (:mod:`.executors`:
this process's pool or a Dask cluster), the content-addressed result store (:mod:`.store`), scoring diagnoses
against the expectations (:mod:`.scoring`), release matrices and upgrade audits (:mod:`.matrix`), the preflight
of an outside engine (:mod:`.preflight`) and the SQLite history of every run (:mod:`.history`).
"""
