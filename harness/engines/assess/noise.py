"""The noise probe's assessment: the objective's noise level, in words (:mod:`defects4warp.probes.noise` measures it)."""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


def relative_text(n: dict) -> str:
    """``sigma_f / |f(x0)|`` in words, or why there is none: the measurement divides by ``max(|f(x0)|, 1e-300)``, so
    an objective of exactly 0 at the point (``n["values"][0]``, f(x0); a fit whose loss starts at its minimum)
    would read as a relative level near 1e290."""
    values = n.get("values") or []
    if values and values[0] == 0:
        return "the objective is 0 at the point: no relative level"
    return f"{n['relative']:.2g} relative"


@assessor("noise")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """One evidence line: the noise level the FD resolution is built on."""
    a = Assessment()
    n = doc.get("noise")
    if n:
        a.add("noise", True, f"objective noise sigma_f = {n['sigma']:.3g} ({relative_text(n)}; "
              f"ECnoise order {n['order']} from {n['points']} evaluations)", {k: n[k] for k in ("sigma", "ecnoise", "floor")})
    return a
