"""The train probe's assessment: the comparison after the program's own iterations (:mod:`defects4warp.probes.train` measures it)."""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


@assessor("train")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entry of the re-measurement after ``train()``: clean unless a
    comparison there (elements or directions) disagrees."""
    a = Assessment()
    tr = doc.get("train")
    if tr:
        a.add("train", "comparison" not in tr or all(
            (tr["comparison"].get(k) or {}).get("signature", "agrees") in ("agrees", "unresolved")
            for k in ("elements", "directions")),
            f"re-measured after {tr['iterations']} iterations of the program's own optimisation (train(); for a "
            f"script, its loop continued) that moved the params by {tr.get('moved', 0):.3g} "
            "(||p_after - p_before|| / the larger of the two norms: 1 when they start at zero)", None)
    return a
