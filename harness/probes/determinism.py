"""Determinism: ``objective()`` twice, ``gradient()`` several times at the same point.

Measures whether the forward is stochastic (and pins the seed through
``set_seed`` when it is), and whether repeated ``gradient()`` calls at the
same point grow (exact multiples 1, 2, 3 or 1, 3, 6: accumulation) or differ
(state carried between iterations). The first call is made with the
launches any tape records captured (for the per-launch check); when the
``trace`` probe is on the list, calls 1 and 2 run under the runtime trace
(:mod:`defects4warp.probes.trace`: call 2 shows what one iteration leaves to the next).
"""

from __future__ import annotations

import contextlib
import time

import numpy as np

from ..measure import compare
from . import Assessment, assessor, probe
from .context import finite_or_str

#: Relative difference between two objective() calls below which the forward
#: counts as deterministic (float atomics on a GPU reorder sums: ~1e-7 in float32).
JITTER_RTOL = 1e-6


@contextlib.contextmanager
def capture_launches():
    """Collect the launches any ``wp.Tape`` records inside the block (the
    user's tape is created inside gradient(), so the class method is wrapped)."""
    import warp as wp

    captured = []
    original = wp.Tape.record_launch

    def record(self, kernel, dim, max_blocks, inputs, outputs, device, *args, **kwargs):
        captured.append([kernel, dim, max_blocks, inputs, outputs, device])
        return original(self, kernel, dim, max_blocks, inputs, outputs, device, *args, **kwargs)

    wp.Tape.record_launch = record
    try:
        yield captured
    finally:
        wp.Tape.record_launch = original


@probe("determinism", calls=3, jitter_rtol=JITTER_RTOL)
def measure(ctx, *, calls: int = 3, jitter_rtol: float = JITTER_RTOL) -> dict:
    """objective() twice (seed pinned if stochastic) and ``calls`` gradient() calls at the same point.

    Parameters
    ----------
    calls : int
        gradient() calls at the given point (default 3: enough to tell
        1, 2, 3 from 1, 3, 6).
    jitter_rtol : float
        Relative change between two objective() calls above which the
        forward is stochastic (default :data:`JITTER_RTOL`).
    """
    ctx.stage("objective")
    f1 = ctx.objective()
    f2 = ctx.objective()
    rel = abs(f1 - f2) / max(abs(f1), abs(f2), 1e-300) if np.isfinite(f1) and np.isfinite(f2) else 0.0
    stochastic = bool(rel > jitter_rtol)
    has_seed = bool(ctx.doc["protocol"]["optional"].get("set_seed"))
    pinned_ok = None
    if stochastic and has_seed:
        ctx.pinned = True
        g1 = ctx.objective()
        g2 = ctx.objective()
        pinned_ok = bool(g1 == g2)
        if not pinned_ok:
            ctx.pinned = False
        else:
            f1 = g1
    ctx.f0 = f1
    det = {
        "objective": [finite_or_str(f1), finite_or_str(f2)],
        "objective_relative_change": rel,
        "stochastic": stochastic,
        "seed_pinned": ctx.pinned,
        "pinned_repeatable": pinned_ok,
    }
    ctx.doc["determinism"] = det
    ctx.save()
    out = []
    for k in range(calls):
        ctx.stage(f"gradient_{k + 1}")
        t = time.perf_counter()
        if k == 0:
            with capture_launches() as captured:
                if getattr(ctx, "want_trace", False):
                    from .trace import traced_call

                    out.append(traced_call(ctx, 1))
                else:
                    out.append(ctx.gradient())
            ctx.launches = captured
        elif k == 1 and getattr(ctx, "want_trace", False):
            from .trace import traced_call

            out.append(traced_call(ctx, 2))
        else:
            out.append(ctx.gradient())
        det.setdefault("gradient_call_s", []).append(time.perf_counter() - t)
    ctx.stage(None)
    ctx.calls = out
    det["gradient_norms"] = [finite_or_str(np.linalg.norm(c)) for c in out]
    det["growth_factors"] = compare.growth_factors(out)
    det["growth"] = det["growth_factors"] is not None
    det["calls_identical"] = all(compare.calls_identical(out[0], c) for c in out[1:])
    det["first_call_differs"] = bool(len(out) > 1 and not compare.calls_identical(out[0], out[1]))
    det["later_calls_zero"] = bool(len(out) > 1 and np.any(out[0]) and all(not np.any(c) for c in out[1:]))
    ctx.save()
    return det


#: Relative growth of the gradient norm from each call to the next (same
#: point) that reads as partial accumulation when the calls are not exact
#: multiples (hand-set in v3). The weights of the two patterns are rows
#: ``gradient_norm_grows`` and ``later_calls_zero`` of the evidence table.
GROWING_NORM = 0.1


@assessor("determinism")
def assess(doc: dict, *, growing_norm: float = GROWING_NORM, **_) -> Assessment:
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
