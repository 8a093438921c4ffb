"""Central finite differences with a noise model, at the given and a perturbed point.

Items are coordinates (``e = h_i * unit_i``) and random directions
(``e = h * v``, ``|v| = sqrt(n)``); each item measures
``fd = (f(x+e) - f(x-e)) / (2 s)`` with ``s`` the half-step actually stored
(after rounding to the param dtype; 1 for directions, whose autodiff value is
``g . (x_plus - x_minus) / 2``). Its uncertainty is
``resolution_factor * sigma_f / (sqrt(2) s)`` with sigma_f from
:mod:`defects4warp.probes.noise` (zero when the noise probe did not run): items
below it are *unresolved* (:func:`defects4warp.measure.compare.unresolved`).

Budget with the defaults: 2 * (coords + dirs) at the given point plus
2 * (perturbed_coords + perturbed_dirs) at the perturbed point, i.e.
2 * (5 + 2) + 2 * (0 + 1) = 16 objective evaluations, and one extra
gradient() call at the perturbed point.
"""

from __future__ import annotations

import math

import numpy as np

from ..measure import compare
from . import probe
from .context import finite_or_str

#: Multiple of the noise-derived standard deviation that an FD item must
#: exceed to count as resolved (about 3 sigma of the difference's noise plus
#: margin for the ECnoise estimate's own spread over a few samples).
RESOLUTION_FACTOR = 4.0


def pick_coords(ctx, k: int) -> np.ndarray:
    """``k`` flat coordinates spread over the params (each param gets one when
    ``k`` allows), drawn with ``ctx.rng``; all of them when n <= k."""
    n = ctx.flat.n
    if n <= k:
        return np.arange(n)
    chosen = []
    for i in range(len(ctx.flat.names)):
        a, b = ctx.flat.offsets[i], ctx.flat.offsets[i + 1]
        if len(chosen) < k and b > a:
            chosen.append(int(ctx.rng.integers(a, b)))
    rest = np.setdiff1d(np.arange(n), chosen)
    chosen += [int(c) for c in ctx.rng.choice(rest, size=k - len(chosen), replace=False)]
    return np.sort(np.array(chosen))


def measure_items(ctx, x0: np.ndarray, n_coords: int, n_dirs: int, resolution_factor: float) -> dict:
    """FD items at ``x0`` (see module docstring). Returns ``{"coords": [flat
    index], "items": [...]}`` where each item holds ``kind``, ``param``,
    ``index`` (coords), ``s``, ``fp``, ``fm``, ``fd``, ``unc`` and, for
    directions, ``disp`` (the displacement actually taken, shape (n,))."""
    h = ctx.steps()
    sigma = ctx.noise or 0.0
    items = []
    coords = pick_coords(ctx, n_coords)
    try:
        for i in coords:
            xp = x0.copy()
            xp[i] += h[i]
            sp = ctx.flat.set(xp)[i]
            fp = ctx.objective()
            xm = x0.copy()
            xm[i] -= h[i]
            sm = ctx.flat.set(xm)[i]
            fm = ctx.objective()
            s = 0.5 * (sp - sm)
            name, j = ctx.flat.owner(int(i))
            items.append({"kind": "coord", "flat": int(i), "param": name, "index": j, "s": float(s), "fp": fp, "fm": fm,
                          "fd": (fp - fm) / (2 * s) if s else float("nan"),
                          "unc": resolution_factor * sigma / (math.sqrt(2) * abs(s)) if s else float("inf")})
        for _ in range(n_dirs):
            v = ctx.rng.standard_normal(ctx.flat.n)
            v /= max(np.linalg.norm(v), 1e-300) / math.sqrt(ctx.flat.n)
            xp = ctx.flat.set(x0 + h * v)
            fp = ctx.objective()
            xm = ctx.flat.set(x0 - h * v)
            fm = ctx.objective()
            items.append({"kind": "dir", "s": 1.0, "fp": fp, "fm": fm, "fd": (fp - fm) / 2.0,
                          "unc": resolution_factor * sigma / math.sqrt(2), "disp": 0.5 * (xp - xm)})
    finally:
        ctx.flat.set(x0)
    return {"coords": coords, "items": items}


def ad_values(g: np.ndarray, items: list) -> np.ndarray:
    """Autodiff value of each item: ``g[i]`` for a coordinate, ``g . disp`` for a direction."""
    out = []
    for it in items:
        if it["kind"] == "coord":
            out.append(float(g[it["flat"]]))
        else:
            out.append(float(np.dot(g, it["disp"])) if np.all(np.isfinite(g)) else float("nan"))
    return np.array(out)


def compare_items(ctx, g: np.ndarray, items: list, rtol: float) -> dict:
    """Signatures of ``g`` against the items: ``elements`` (coordinates),
    ``directions``, and ``joint`` (both, for one exact factor over all)."""
    ad = ad_values(g, items)
    fd = np.array([it["fd"] for it in items])
    unc = np.array([it["unc"] for it in items])
    kinds = np.array([it["kind"] for it in items])
    out = {}
    for label, sel in (("elements", kinds == "coord"), ("directions", kinds == "dir")):
        if not np.any(sel):
            out[label] = None
            continue
        sig = compare.signature(ad[sel], fd[sel], rtol, unc[sel])
        bad = compare.mismatch(ad[sel], fd[sel], rtol, None, unc[sel]) & ~compare.unresolved(ad[sel], fd[sel], unc[sel])
        idx = np.flatnonzero(sel)
        sig["mismatched"] = [_describe(items[j], ad[j]) for j, b in zip(idx, bad) if b][:8]
        sig["mismatched_items"] = [int(j) for j, b in zip(idx, bad) if b]
        if label == "elements":
            sig["per_param"] = {}
            owners = np.array([items[j]["param"] for j in idx])
            for k in ctx.flat.names:
                m = owners == k
                if np.any(m):
                    a_k, f_k, u_k = ad[sel][m], fd[sel][m], unc[sel][m]
                    sig["per_param"][k] = {"signature": compare.signature(a_k, f_k, rtol, u_k)["signature"],
                                           "ad_zero": bool(not np.any(a_k)), "fd_zero": bool(not np.any(f_k)),
                                           "fd_below_resolution": bool(np.all(np.abs(f_k) <= u_k))}
        else:
            sig["autodiff"] = [finite_or_str(a) for a in ad[sel]]
            sig["fd"] = [float(f) for f in fd[sel]]
        out[label] = sig
    joint = compare.signature(ad, fd, rtol, unc)
    out["joint"] = {k: joint[k] for k in ("signature", "factor", "n", "n_mismatch", "n_unresolved", "relative_error")}
    out["joint"]["autodiff"] = [finite_or_str(a) for a in ad]
    return out


def _describe(it: dict, ad: float) -> dict:
    d = {"kind": it["kind"], "autodiff": finite_or_str(ad), "fd": float(it["fd"]), "unc": float(it["unc"])}
    if it["kind"] == "coord":
        d.update(param=it["param"], index=it["index"])
    return d


def _public(items: list) -> list:
    """Items without the displacement vectors (kept in memory for the sweep only)."""
    return [{k: v for k, v in it.items() if k != "disp"} for it in items]


@probe("fd", coords=5, dirs=2, perturbed_coords=0, perturbed_dirs=1, perturb=0.05,
       resolution_factor=RESOLUTION_FACTOR)
def measure(ctx, *, coords: int = 5, dirs: int = 2, perturbed_coords: int = 0, perturbed_dirs: int = 1,
            perturb: float = 0.05, resolution_factor: float = RESOLUTION_FACTOR) -> dict:
    """Central FD items at the given point (compared with every gradient call) and at a perturbed point.

    Parameters
    ----------
    coords, dirs : int
        Coordinates and random directions at the given point (all
        coordinates, and no direction, when the problem has at most ``coords``).
    perturbed_coords, perturbed_dirs : int
        The same at the perturbed point ``x0 + perturb * scale * N(0, 1)``,
        where a bug that is exact at the given point (zero initial state)
        can show; one extra gradient() call is made there.
    perturb : float
        Size of the perturbation in units of each coordinate's scale.
    resolution_factor : float
        See :data:`RESOLUTION_FACTOR`.
    """
    ctx.stage("fd")
    if ctx.flat.n <= coords:
        dirs = 0  # every coordinate is checked: a direction is a combination of them and adds nothing
    rtol = compare.rtol_for(ctx.flat.dtypes)
    x0 = ctx.flat.get()
    base = measure_items(ctx, x0, coords, dirs, resolution_factor)
    ctx.fd_given = base
    fdv = np.array([it["fd"] for it in base["items"] if it["kind"] == "coord"])
    res = {
        "rtol": rtol,
        "n_params": ctx.flat.n,
        "resolution_factor": resolution_factor,
        "coords": [{"param": it["param"], "index": it["index"]} for it in base["items"] if it["kind"] == "coord"],
        "items": _public(base["items"]),
        "fd_norm": float(np.linalg.norm(fdv)) if fdv.size else 0.0,
        "fd_all_zero": bool(fdv.size and not np.any(fdv)),
        "fd_finite": bool(np.all(np.isfinite([it["fd"] for it in base["items"]]))),
        "calls": [compare_items(ctx, g, base["items"], rtol) for g in ctx.calls],
    }
    ctx.doc["fd"] = res
    ctx.save()
    if perturbed_coords or perturbed_dirs:
        scale = ctx.flat.scales()
        x1 = ctx.flat.set(x0 + perturb * scale * ctx.rng.standard_normal(ctx.flat.n))
        ctx.stage("perturbed")
        try:
            g1 = ctx.gradient()
            pert = measure_items(ctx, x1, perturbed_coords, perturbed_dirs, resolution_factor)
            if not all(np.isfinite([it["fp"] for it in pert["items"]] + [it["fm"] for it in pert["items"]])):
                # the perturbation left the objective's domain (e.g. sqrt of a negative): nothing to compare there
                res["perturbed_note"] = "objective not finite near the perturbed point: not compared"
            else:
                ctx.fd_perturbed = {"x": x1, "g": g1, **pert}
                res["perturbed"] = compare_items(ctx, g1, pert["items"], rtol)
                res["perturbed"]["items"] = _public(pert["items"])
        finally:
            ctx.flat.set(x0)
            ctx.stage(None)
        ctx.save()
    return res
