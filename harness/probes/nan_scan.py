"""NaN scan: non-finite values in the objective and in every gradient call."""

from __future__ import annotations

import numpy as np

from . import probe


@probe("nan_scan")
def measure(ctx) -> dict:
    """Count NaN/inf entries per param and call; note whether the objective is finite."""
    det = ctx.doc.get("determinism", {})
    obj = det.get("objective", [])
    bad = {}
    for c, g in enumerate(ctx.calls):
        for i, k in enumerate(ctx.flat.names):
            a, b = ctx.flat.offsets[i], ctx.flat.offsets[i + 1]
            nb = int(np.sum(~np.isfinite(g[a:b])))
            if nb:
                bad.setdefault(k, []).append({"call": c + 1, "count": nb, "of": int(b - a)})
    out = {"objective_finite": bool(obj) and all(isinstance(v, float) for v in obj), "gradient_nonfinite": bad}
    ctx.doc["nan_scan"] = out
    ctx.save()
    return out
