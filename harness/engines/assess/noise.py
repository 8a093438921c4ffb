"""The noise probe's assessment: the objective's noise level, in words (:mod:`defects4warp.probes.noise` measures it)."""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


@assessor("noise")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """One evidence line: the noise level the FD resolution is built on."""
    a = Assessment()
    n = doc.get("noise")
    if n:
        a.add("noise", True, f"objective noise sigma_f = {n['sigma']:.3g} ({n['relative']:.2g} relative; "
              f"ECnoise order {n['order']} from {n['points']} evaluations)", {k: n[k] for k in ("sigma", "ecnoise", "floor")})
    return a
