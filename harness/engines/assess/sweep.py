"""The step sweep's assessment: each swept item's reading, in words, and the swept items as facts.

:mod:`defects4warp.probes.sweep` re-measures each disagreeing finite-difference item at other steps in
the worker (and :mod:`defects4warp.probes.train` after ``train()``); this reads those records.
"""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


@assessor("sweep")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entries of the step sweep: one per swept item (at the given point,
    and after ``train()`` where the train probe swept), and the disagreeing items
    left unswept by the budget. Facts: ``sweeps`` (the swept items, those after
    train() with ``point`` "after train()")."""
    a = Assessment()
    sweeps = list((doc.get("sweep") or {}).get("items", [])) + [dict(r, point="after train()") for r in
                                                             (doc.get("train") or {}).get("sweep", [])]
    for r in sweeps:
        where = f"{r['param']}[{r['index']}]" if r.get("kind") == "coord" else "a random direction"
        a.add("sweep", r["verdict"] != "confirmed",
              f"step sweep at {where} ({r['point']} point): autodiff {r['autodiff']:.4g}, one-sided "
              f"{r['forward'][0]:.4g} / {r['backward'][0]:.4g} at the smallest step, central "
              + ", ".join(f"{c:.4g}" for c in r["central"]) + f": {r['verdict']}", r)
    unswept = (doc.get("sweep") or {}).get("unswept", 0)
    if unswept:
        a.add("sweep", True, f"{unswept} further disagreeing item(s) not swept (budget): not counted", None)
    a.facts["sweeps"] = sweeps
    return a
