"""Reference: comparison with the problem's ``reference_gradient()``, where it has one.

The problem says finite differences cannot judge it (float32 cancellation, a
kink, a chaotic horizon, a surrogate gradient), so every gradient call is
compared with the reference, and finite differences are compared with the
reference too: where they disagree, a sweep over ``steps`` (5 factors 10x
apart, larger steps included since float32 cancellation shrinks with the
step) names why (:func:`defects4warp.measure.compare.reference_disagreement`).
"""

from __future__ import annotations

import numpy as np

from ..measure import compare
from . import probe

#: Step factors when finite differences disagree with reference_gradient().
REFERENCE_SWEEP_STEPS = (0.01, 0.1, 1.0, 10.0, 100.0)


def _sweep(ctx, x0, f0, idx, ref, steps):
    h = ctx.steps()
    out = []
    try:
        for i in idx:
            rec = {"param": ctx.flat.owner(i)[0], "index": ctx.flat.owner(i)[1], "autodiff": float(ref[i]),
                   "steps": [], "forward": [], "backward": [], "central": []}
            for k in steps:
                xp = x0.copy()
                xp[i] += k * h[i]
                sp = ctx.flat.set(xp)[i]
                fp = ctx.objective()
                xm = x0.copy()
                xm[i] -= k * h[i]
                sm = ctx.flat.set(xm)[i]
                fm = ctx.objective()
                rec["steps"].append(float(sp - x0[i]))
                rec["forward"].append((fp - f0) / (sp - x0[i]))
                rec["backward"].append((f0 - fm) / (x0[i] - sm))
                rec["central"].append((fp - fm) / (sp - sm))
            out.append(rec)
    finally:
        ctx.flat.set(x0)
    return out


@probe("reference", sweep_coords=3, steps=REFERENCE_SWEEP_STEPS)
def measure(ctx, *, sweep_coords: int = 3, steps=REFERENCE_SWEEP_STEPS) -> dict | None:
    """Every gradient call vs reference_gradient(), and finite differences vs the reference.

    Parameters
    ----------
    sweep_coords : int
        Coordinates where FD and the reference disagree most that are swept.
    steps : tuple[float]
        Step factors of that sweep, smallest first.
    """
    if not ctx.doc["protocol"]["optional"].get("reference_gradient"):
        return None
    ctx.stage("reference")
    ref = ctx.flat.flatten_gradient(ctx.p.reference_gradient())
    rtol = compare.rtol_for(ctx.flat.dtypes)
    out = {"calls": [compare.signature(g, ref, rtol) for g in ctx.calls], "norm": float(np.linalg.norm(ref))}
    given = getattr(ctx, "fd_given", None)
    if given is not None:
        coords = [it for it in given["items"] if it["kind"] == "coord"]
        if coords:
            idx = np.array([it["flat"] for it in coords])
            fdc = np.array([it["fd"] for it in coords])
            out["fd_vs_reference"] = compare.signature(fdc, ref[idx], rtol)
            bad = compare.mismatch(ref[idx], fdc, rtol)
            # random directions too: a reference that differs from the function's derivative only
            # at a few coordinates (a surrogate on saturated entries) is seen along directions
            # that mix every coordinate, when the sampled coordinates happen to agree
            dirs = [it for it in given["items"] if it["kind"] == "dir"]
            if dirs and out["fd_vs_reference"]["signature"] == "agrees" and np.all(np.isfinite(ref)):
                fdd = np.array([it["fd"] for it in dirs])
                refd = np.array([float(np.dot(ref, it["disp"])) for it in dirs])
                along = compare.signature(fdd, refd, rtol)
                if along["signature"] != "agrees":
                    out["fd_vs_reference"] = dict(along, along_directions=True)
            err = np.where(bad, np.abs(ref[idx] - fdc), -1.0)
            worst = [int(idx[j]) for j in np.argsort(-err) if bad[j]][:sweep_coords]
            if worst:
                recs = _sweep(ctx, ctx.flat.get(), ctx.f0 if ctx.f0 is not None else ctx.objective(), worst, ref, steps)
                for rec in recs:
                    rec["verdict"] = compare.reference_disagreement(rec["autodiff"], rec["forward"], rec["backward"],
                                                                    rec["central"], rtol)
                out["sweep"] = recs
    ctx.doc["reference"] = out
    ctx.stage(None)
    ctx.save()
    return out
