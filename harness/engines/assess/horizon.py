"""The horizon bisection's assessment: where autodiff and finite differences first part (:mod:`defects4warp.probes.horizon` measures it)."""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


@assessor("horizon")
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entry of the horizon bisection: the first number of steps at
    which autodiff and finite differences part, or agreement at the full horizon."""
    a = Assessment()
    hz = doc.get("horizon")
    if hz:
        if hz["first_disagreement"] is None:
            a.add("horizon", True, f"with steps={hz['steps']} set again the directional check agrees", hz)
        else:
            a.add("horizon", False, f"autodiff and finite differences first part at steps="
                  f"{hz['first_disagreement']} of {hz['steps']} (bisection over the horizon)", hz)
    return a
