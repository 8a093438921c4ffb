"""Train: when autodiff agrees at the given point, re-measure after a few of
the program's own optimisation iterations.

Some bugs are exact at the starting point (a zero initial velocity, an
untouched buffer, a first iteration with nothing carried over) and show
only once the user's loop has moved the state. Where the problem defines
``train(iterations)``, this probe runs it from the given point, then
compares one gradient() call with FD items at the point the loop reached,
and restores the params. Costs 2 * (coords + dirs) objective evaluations and
one gradient call, plus whatever ``train`` itself evaluates (defaults: one
random direction, 1 + 2 evaluations).
"""

from __future__ import annotations

import numpy as np

from . import probe
from .fd import RESOLUTION_FACTOR, _public, compare_items, measure_items
from .sweep import sweep_item


def _agrees(doc: dict) -> bool:
    fd = doc.get("fd") or {}
    if not fd.get("calls"):
        return False
    comps = [fd["calls"][0].get("elements"), fd["calls"][0].get("directions")]
    pert = fd.get("perturbed") or {}
    comps += [pert.get("elements"), pert.get("directions")]
    det = doc.get("determinism") or {}
    return (all((c or {}).get("signature", "agrees") in ("agrees", "unresolved") for c in comps)
            and not det.get("growth") and not det.get("first_call_differs")
            and not (doc.get("nan_scan") or {}).get("gradient_nonfinite"))


@probe("train", iterations=3, coords=0, dirs=1, sweep_items=2)
def measure(ctx, *, iterations: int = 3, coords: int = 0, dirs: int = 1, sweep_items: int = 2) -> dict | None:
    """Run ``train(iterations)``, then compare one gradient() call with FD there.

    Parameters
    ----------
    iterations : int
        Iterations of the user's own loop.
    coords, dirs : int
        FD items at the point reached.
    sweep_items : int
        Disagreeing items there that go through the step sweep
        (:func:`defects4warp.probes.sweep.sweep_item`); only swept disagreements count.
    """
    if not ctx.doc["protocol"]["optional"].get("train") or not _agrees(ctx.doc):
        return None
    ctx.stage("train")
    x0 = ctx.flat.get()
    rtol = ctx.doc["fd"]["rtol"]
    out = {"iterations": iterations}
    try:
        losses = ctx.p.train(iterations)
        out["losses"] = [float(v) for v in (losses or [])][:50]
        x1 = ctx.flat.get()
        # relative to the larger of the two norms: params that start at zero moved by 1, not by 1e300
        den = max(float(np.linalg.norm(x0)), float(np.linalg.norm(x1)))
        out["moved"] = float(np.linalg.norm(x1 - x0) / den) if den > 0 else 0.0
        f1 = ctx.objective() if np.all(np.isfinite(x1)) else float("nan")
        if not np.all(np.isfinite(x1)) or not np.isfinite(f1):
            out["note"] = "the params or the objective are not finite after train() (the loop diverged): not compared"
        else:
            g = ctx.gradient()
            items = measure_items(ctx, x1, coords, dirs, RESOLUTION_FACTOR)
            out["comparison"] = compare_items(ctx, g, items["items"], rtol)
            out["items"] = _public(items["items"])
            bad = sorted({j for k in ("elements", "directions") for j in (out["comparison"].get(k) or {}).get("mismatched_items", [])})
            if bad:
                ctx.flat.set(x1)
                out["sweep"] = [dict(sweep_item(ctx, x1, f1, g, items["items"][j], rtol), item=j) for j in bad[:sweep_items]]
    finally:
        ctx.flat.set(x0)
        ctx.stage(None)
    ctx.doc["train"] = out
    ctx.save()
    return out
