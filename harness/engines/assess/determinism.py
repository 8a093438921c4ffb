"""The determinism probe's assessment: repeatability of the objective and of gradient() calls at one point.

:mod:`defects4warp.probes.determinism` measures them; this reads its document.
"""

from __future__ import annotations

from . import AssessContext, Assessment, assessor


#: Relative growth of the gradient norm from each call to the next (same
#: point) that reads as partial accumulation when the calls are not exact
#: multiples (hand-set in v3). The weights of the two patterns are rows
#: ``gradient_norm_grows`` and ``later_calls_zero`` of the evidence table.
GROWING_NORM = 0.1


@assessor("determinism", cites=("later_calls_zero", "gradient_norm_grows"))
def assess(doc: dict, ctx: AssessContext | None = None, *, growing_norm: float = GROWING_NORM) -> Assessment:
    """Evidence from repeatability; structured evidence (:meth:`Assessment.cite`)
    only for patterns across calls that exact growth does not already name (the
    signature rows of the evidence table do that): ``later_calls_zero`` and
    ``gradient_norm_grows`` (norm up by more than ``growing_norm``, relative, on
    every call). Their class weights are rows of
    ``harness/engines/evidence_table.yaml``."""
    a = Assessment()
    det = doc.get("determinism") or {}
    if not det:
        return a
    if det.get("stochastic"):
        msg = f"objective() changed between two calls (relative change {det['objective_relative_change']:.3g})"
        msg += "; seed pinned through set_seed" if det.get("seed_pinned") else "; no usable set_seed"
        a.add("determinism", False, msg, {"objective": det.get("objective")})
    else:
        a.add("determinism", True, "objective() is repeatable", {"objective": det.get("objective")})
    gf = det.get("growth_factors")
    if gf:
        a.add("determinism", False, "gradient() grows across calls at the same point: factors "
              + ", ".join(f"{f:.6g}" for f in gf), {"factors": gf})
    elif det.get("first_call_differs"):
        extra = " (later calls are exactly zero)" if det.get("later_calls_zero") else ""
        a.add("determinism", False, "gradient() differs between the first and second call at the same point" + extra,
              {"norms": det.get("gradient_norms")})
    elif "calls_identical" in det:
        a.add("determinism", True, "gradient() is identical across calls at the same point",
              {"norms": det.get("gradient_norms")})
    if det.get("later_calls_zero"):
        a.cite("later_calls_zero", "determinism", "later gradient() calls at the same point are exactly zero",
               {"norms": det.get("gradient_norms")})
    norms = [n for n in det.get("gradient_norms", []) if isinstance(n, float)]
    if not det.get("growth") and len(norms) >= 3 and all(b > x * (1 + growing_norm) for x, b in zip(norms, norms[1:])):
        a.cite("gradient_norm_grows", "determinism", "the gradient norm grows on every call", {"norms": norms})
        a.add("determinism", False, "gradient norm grows on every call at the same point: "
              + ", ".join(f"{n:.4g}" for n in norms), {"norms": norms})
    return a
