"""Step sweep: every disagreement goes through it before it counts.

For each FD item that disagrees with autodiff -- at the given point (call 1)
and at the perturbed point -- the objective is evaluated at
``x +- t*e`` for the small step factors ``steps`` (default 0.1; the base step
1.0 is reused from the FD probe) and at ``x +- big*e`` (default 10), and
:func:`defects4warp.measure.compare.sweep_verdict` names what it sees:
``confirmed`` (a real disagreement), ``kink``/``staircase``/``kink_nearby``
(finite differences fooled by a nonsmooth objective), ``precision`` (the
base step was below resolution) or ``unclear``. Items are swept worst first
(largest excess over their tolerance); at most ``max_items`` (each costs
2 * (len(steps) + 1) objective evaluations, plus one for f at the perturbed
point). Unswept disagreements are reported, never counted.

When an item is ``confirmed`` and the variant folder defines a hand-written adjoint, the sweep
asks for the ablation probe (:mod:`defects4warp.probes.ablation`), which the worker runs after its
list; otherwise nothing of it is imported or written.
"""

from __future__ import annotations

import math

import numpy as np

from ..measure import compare
from ..paths import program_files
from . import probe
from .fd import ad_values

#: Small step factors (fractions of the base step), smallest first.
SWEEP_STEPS = (0.1,)
#: The larger step factor (float32 cancellation shrinks with a larger step).
BIG_STEP = 10.0


def _candidates(point: str, items: list, ad: np.ndarray, rtol: float) -> list:
    fd = np.array([it["fd"] for it in items])
    unc = np.array([it["unc"] for it in items])
    out = []
    for kind in ("coord", "dir"):
        sel = np.array([it["kind"] == kind for it in items])
        if not np.any(sel):
            continue
        idx = np.flatnonzero(sel)
        bad = compare.mismatch(ad[sel], fd[sel], rtol, None, unc[sel]) & ~compare.unresolved(ad[sel], fd[sel], unc[sel])
        scale = float(np.max(np.abs(fd[sel])))
        for j, b in zip(idx, bad):
            if b:
                slack = rtol * scale + rtol * abs(fd[j]) + unc[j]
                excess = float(np.inf if not np.isfinite(ad[j]) else abs(ad[j] - fd[j]) / max(slack, 1e-300))
                out.append((excess, point, int(j)))
    return out


def sweep_item(ctx, x: np.ndarray, f_here: float, g: np.ndarray, it: dict, rtol: float, *, steps=SWEEP_STEPS,
               big: float = BIG_STEP) -> dict:
    """Sweep one FD item (from :func:`defects4warp.probes.fd.measure_items`) at
    point ``x`` where the objective is ``f_here`` and the gradient ``g``.
    Costs 2 * (len(steps) + 1) objective evaluations; leaves the params at
    whatever the last evaluation set (the caller restores them).

    Returns
    -------
    dict
        ``kind``, ``autodiff``, ``steps``, ``forward``, ``backward``,
        ``central`` and ``verdict`` (:func:`defects4warp.measure.compare.sweep_verdict`).
    """
    sigma = ctx.noise or 0.0
    if it["kind"] == "coord":
        e = np.zeros(ctx.flat.n)
        e[it["flat"]] = it["s"]
        s = abs(it["s"])
    else:
        e = it["disp"]
        s = 1.0
    sgn = 1.0 if it["kind"] != "coord" or it["s"] > 0 else -1.0
    ad = float(ad_values(g, [it])[0])
    fwd, bwd, cen, u1, uc = [], [], [], [], []
    for t in (*steps, big):
        ctx.flat.set(x + t * e)
        fp = ctx.objective()
        ctx.flat.set(x - t * e)
        fm = ctx.objective()
        if t != big:
            fwd.append(sgn * (fp - f_here) / (t * s))
            bwd.append(sgn * (f_here - fm) / (t * s))
            u1.append(math.sqrt(2) * sigma / (t * s))
        cen.append(sgn * (fp - fm) / (2 * t * s))
        uc.append(sigma / (math.sqrt(2) * t * s))
    fwd.append(sgn * (it["fp"] - f_here) / s)
    bwd.append(sgn * (f_here - it["fm"]) / s)
    u1.append(math.sqrt(2) * sigma / s)
    cen.insert(len(steps), it["fd"])
    uc.insert(len(steps), sigma / (math.sqrt(2) * s))
    verdict = compare.sweep_verdict(ad, fwd, bwd, cen, u1, uc, rtol)
    rec = {"kind": it["kind"], "autodiff": ad, "steps": [*steps, 1.0, big], "forward": fwd, "backward": bwd,
           "central": cen, "verdict": verdict}
    if it["kind"] == "coord":
        rec.update(param=it["param"], index=it["index"])
    return rec


@probe("sweep", max_items=4, steps=SWEEP_STEPS, big=BIG_STEP)
def measure(ctx, *, max_items: int = 4, steps=SWEEP_STEPS, big: float = BIG_STEP) -> dict | None:
    """Re-measure each disagreeing FD item at smaller and larger steps.

    Parameters
    ----------
    max_items : int
        Items swept at most (worst first, alternating between the points).
    steps : tuple[float]
        Small step factors, smallest first (the base step 1.0 is appended).
    big : float
        The larger step factor.
    """
    fd = ctx.doc.get("fd")
    given = getattr(ctx, "fd_given", None)
    if not fd or given is None or not ctx.calls:
        return None
    rtol = fd["rtol"]
    points = {"given": (ctx.flat.get(), ctx.calls[0], given["items"], ctx.f0)}
    pert = getattr(ctx, "fd_perturbed", None)
    if pert is not None:
        points["perturbed"] = (pert["x"], pert["g"], pert["items"], None)
    cands = {}
    for name, (x, g, items, _) in points.items():
        cands[name] = sorted(_candidates(name, items, ad_values(g, items), rtol), reverse=True)
    order = []
    while any(cands.values()) and len(order) < max_items:
        for name in list(cands):
            if cands[name] and len(order) < max_items:
                order.append(cands[name].pop(0))
    n_left = sum(len(v) for v in cands.values())
    out = {"items": [], "unswept": n_left}
    if not order:
        ctx.doc["sweep"] = out
        ctx.save()
        return out
    ctx.stage("sweep")
    x_home = ctx.flat.get()
    try:
        for _, name, j in order:
            x, g, items, f_here = points[name]
            if f_here is None:
                ctx.flat.set(x)
                f_here = ctx.objective()
                points[name] = (x, g, items, f_here)
            rec = sweep_item(ctx, x, f_here, g, items[j], rtol, steps=steps, big=big)
            rec.update(point=name, item=j)
            out["items"].append(rec)
    finally:
        ctx.flat.set(x_home)
        ctx.stage(None)
    ctx.doc["sweep"] = out
    ctx.save()
    confirmed = sorted({r["point"] for r in out["items"] if r["verdict"] == "confirmed"})
    if confirmed and _defines_custom_adjoint(ctx.path):
        # a hand-written adjoint may be where the confirmed disagreement comes from: the ablation probe
        # (probes/ablation.py) measures the gradient without it, after the worker's list
        ctx.request("ablation", points={name: points[name][:3] for name in confirmed})
    return out


def _defines_custom_adjoint(folder: str) -> bool:
    """Whether a program file of ``folder`` (:func:`defects4warp.paths.program_files`: installed packages
    and environments beside it left out) mentions ``func_grad`` (a hand-written adjoint,
    ``@wp.func_grad``): the cheap test before the ablation probe is imported at all."""
    for path in program_files(folder):
        try:
            if "func_grad" in path.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            continue
    return False
