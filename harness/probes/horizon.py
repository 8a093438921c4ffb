"""Horizon: where the problem has an integer ``steps``, bisect for the first
horizon at which autodiff and finite differences part.

Along one random direction, 2 objective evaluations and 1 gradient call per
step count tried (about 2 log2(steps) of each). Runs only when call 1
disagrees with FD and the calls agree with each other (state carried between
calls would mix into the comparison).
"""

from __future__ import annotations

import numpy as np

from ..measure import compare
from . import probe


@probe("horizon")
def measure(ctx) -> dict | None:
    """Bisect ``problem.steps`` for the first disagreement along one direction."""
    steps = getattr(ctx.p, "steps", None)
    det = ctx.doc.get("determinism", {})
    fd = ctx.doc.get("fd") or {}
    if (not isinstance(steps, int) or isinstance(steps, bool) or steps < 2
            or not det.get("calls_identical") or not fd.get("calls")):
        return None
    first = fd["calls"][0]
    if all((first.get(k) or {}).get("signature", "agrees") in ("agrees", "unresolved") for k in ("elements", "directions")):
        return None
    ctx.stage("horizon")
    rtol = fd["rtol"]
    x0 = ctx.flat.get()
    h = ctx.steps()
    v = np.random.default_rng(1).standard_normal(ctx.flat.n)
    checked = {}

    def parts(k):
        ctx.p.steps = k
        g = ctx.gradient()
        xp = ctx.flat.set(x0 + h * v)
        fp = ctx.objective()
        xm = ctx.flat.set(x0 - h * v)
        fm = ctx.objective()
        ctx.flat.set(x0)
        ad, fdv = float(np.dot(g, xp - xm)), fp - fm
        checked[k] = abs(ad - fdv) / max(abs(fdv), 1e-300)
        unc = 4.0 * (ctx.noise or 0.0) * np.sqrt(2)
        return bool(compare.mismatch(np.array([ad]), np.array([fdv]), rtol, None, np.array([unc])).any())

    lo, hi = 0, steps
    try:
        if not parts(steps):
            hi = None
        while hi is not None and hi - lo > 1:
            mid = (lo + hi) // 2
            if parts(mid):
                hi = mid
            else:
                lo = mid
    finally:
        ctx.p.steps = steps
        ctx.flat.set(x0)
        ctx.stage(None)
    out = {"steps": steps, "first_disagreement": hi,
           "relative_error": {str(k): e for k, e in sorted(checked.items())}}
    ctx.doc["horizon"] = out
    ctx.save()
    return out
