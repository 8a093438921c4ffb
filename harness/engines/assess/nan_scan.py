"""The NaN scan's assessment: non-finite gradients, in words (:mod:`defects4warp.probes.nan_scan` measures them)."""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


@assessor("nan_scan")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entries of the NaN scan: the params whose gradient holds NaN/inf
    (and whether the objective is finite there), or a finite gradient."""
    a = Assessment()
    nan = doc.get("nan_scan", {})
    if nan:
        bad = nan.get("gradient_nonfinite") or {}
        if bad:
            a.add("nan_scan", False, "NaN/inf in the gradient of " + ", ".join(sorted(bad)) +
                  (" while the objective is finite" if nan.get("objective_finite") else ""), bad)
        else:
            a.add("nan_scan", True, "gradient is finite", None)
    return a
