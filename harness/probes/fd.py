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
from . import AssessContext, Assessment, Evidence, assessor, probe
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


@assessor("fd", cites=("factor_2_or_3", "factor_reduction_size", "factor_equals_seed_size", "param_gradient_zero"))
def assess(doc: dict, ctx: AssessContext | None = None) -> Assessment:
    """Evidence entries of every autodiff-vs-truth comparison measured
    (:func:`defects4warp.measure.judge.comparisons`: finite differences, and the
    problem's ``reference_gradient()`` where it has one; entries of the latter
    are the ``reference`` probe's), and finite differences that disagree with
    the reference gradient.

    Facts: ``comparisons`` (the list of (label, signature dict)) and
    ``fd_vs_reference`` (the reference probe's comparison of finite
    differences with ``reference_gradient()``, or None).
    """
    from ..measure.judge import comparisons

    a = Assessment()
    comps = comparisons(doc)
    for label, c in comps:
        probe_name = "fd" if "finite" in label else "reference"
        if c["signature"] == "agrees":
            extra = f", {c['n_unresolved']} below resolution" if c.get("n_unresolved") else ""
            a.add(probe_name, True, f"{label}: agrees on {c['n'] - c.get('n_unresolved', 0)} checked{extra} "
                  f"(relative error {c['relative_error']:.2g})", None)
        elif c["signature"] == "unresolved":
            a.add(probe_name, True, f"{label}: all {c['n']} items below the finite-difference resolution "
                  "(unresolved, not agreement)", None)
        else:
            text = (f"{label}: {c['n_mismatch']} of {c['n'] - c.get('n_unresolved', 0)} resolved items disagree, "
                    f"relative error {c['relative_error']:.3g}, signature {c['signature']}")
            if c.get("factor") is not None:
                text += f" (factor {c['factor']:.6g})"
            a.add(probe_name, False, text, {k: c.get(k) for k in ("mismatched", "factor", "zero_fraction")})
    ref = doc.get("reference") or {}
    fd_vs_ref = ref.get("fd_vs_reference")
    if fd_vs_ref and fd_vs_ref["signature"] != "agrees":
        a.add("reference", False, f"finite differences disagree with reference_gradient() (relative error "
              f"{fd_vs_ref['relative_error']:.3g}): FD cannot judge here", None)
    a.facts.update(comparisons=comps, fd_vs_reference=fd_vs_ref)
    return a


def zero_params(doc: dict) -> list:
    """Params whose checked elements are all exactly zero in call 1 while finite differences are not."""
    calls = (doc.get("fd") or {}).get("calls") or []
    if not calls or doc.get("reference") or not calls[0].get("elements"):
        return []
    per = calls[0]["elements"].get("per_param", {})
    return sorted(k for k, s in per.items() if s["signature"] == "zero")


def flat_params(doc: dict) -> list:
    """Params whose autodiff and finite differences are both exactly zero."""
    calls = (doc.get("fd") or {}).get("calls") or []
    per = (calls[0].get("elements") or {}).get("per_param", {}) if calls else {}
    return sorted(k for k, s in per.items() if s["ad_zero"] and s["fd_zero"])


def comparison_factor(comps) -> float | None:
    """The exact factor of the first comparison that found one (autodiff / truth), or None."""
    for label, c in comps:
        if c.get("factor") is not None:
            return c["factor"]
    return None


def joint_factor(doc: dict) -> float | None:
    """The exact factor of call 1's joint comparison (elements and directions), or None."""
    calls = (doc.get("fd") or {}).get("calls") or []
    if calls:
        return (calls[0].get("joint") or {}).get("factor")
    return None


def factor_evidence(factor: float | None, seeds: list, *, reduction: bool = True,
                    max_reduction: int = 10**6, extents: list | None = None) -> tuple:
    """Structured evidence from the size of an exact factor.

    Parameters
    ----------
    factor : float or None
        autodiff / truth, constant over the items.
    seeds : list[int]
        Element counts of the arrays the trace saw seeded by ``backward()``.
    reduction : bool
        Cite ``factor_reduction_size`` for an integer > 2 (v3: not when a kernel fails alone).
    max_reduction : int
        Largest factor read as the size of a reduction (default 10^6: a
        blown-up gradient, e.g. 2.8e7 x, is not a mean over that many elements).
    extents : list[int], optional
        Element counts the traced call has (array sizes and axes, launch grids:
        :func:`defects4warp.probes.trace.element_counts`). When given, an integer factor
        is read as a reduction's size only if it is one of them (a mean over N elements
        needs N elements somewhere); None (no trace): every integer, as before.

    Returns
    -------
    (list[Evidence], note)
        ``factor_2_or_3`` (2 or 3, >= 1), ``factor_reduction_size`` (an integer
        > 2 or its reciprocal, within 1 %), ``factor_equals_seed_size`` (once
        per seeded array of that many elements); note: one sentence or None.
    """
    ev, note = [], None
    if factor is None or factor == 0:
        return ev, note
    mag = abs(factor) if abs(factor) >= 1 else 1.0 / abs(factor)
    near = round(mag)
    # a reduction over at most max_reduction elements; past that every number is "an integer within 1 %"
    integral = 2 <= near <= max_reduction and abs(mag - near) <= 1e-2 * mag
    if integral and near in (2, 3) and abs(factor) >= 1:
        ev.append(Evidence("factor_2_or_3", "fd", f"exact factor {factor:.6g}", {"factor": factor}))
    if integral and near > 2 and (extents is None or near in set(extents)):
        if reduction:
            ev.append(Evidence("factor_reduction_size", "fd", f"exact factor {factor:.6g}", {"factor": factor}))
        note = f"the factor is {near if abs(factor) >= 1 else '1/' + str(near)}: the size of a reduction"
    for n in seeds:
        if n > 1 and integral and abs(near - n) <= max(1e-2 * n, 0.5):
            ev.append(Evidence("factor_equals_seed_size", "fd", f"factor {factor:.6g} = {n} seeded elements",
                               {"factor": factor, "seed_size": n}))
            note = f"the factor equals the {n} elements of the array the backward pass was seeded over"
    return ev, note


def factor_bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """The exact factor's evidence behind the class of a bug: its size (:func:`factor_evidence`)
    of the comparisons' factor (this probe's assessment, ``ctx.assessed["fd"]``) under
    ``exact_factor`` (call 1's joint factor otherwise, under ``exact_factor``, ``subtly_wrong`` and
    ``sparse``; ``ctx.signature``), and a sentence naming what the size is.

    The seeded sizes are the trace's (its findings' ``seed_size`` and its summary's ``seed_sizes``,
    ``ctx.assessed["trace"]``), the reduction extents its summary's ``extents``; the factor is read
    as a reduction's size only when no kernel fails the per-launch check alone
    (``ctx.assessed["launches"]``).

    Returns
    -------
    Assessment
        ``cited``: structured evidence; ``evidence``: the sentence.
    """
    sig, comparisons = ctx.signature, ctx.facts("fd").get("comparisons") or []
    tfind, trace = ctx.facts("trace").get("findings") or [], ctx.facts("trace").get("trace") or {}
    seeds = [int(f.get("data", {}).get("seed_size") or 0) for f in tfind if isinstance(f.get("data"), dict)]
    seeds += [int(n) for n in (trace.get("summary") or {}).get("seed_sizes", []) or []]
    extents = (trace.get("summary") or {}).get("extents")  # None without a trace (or an older document)
    factor = comparison_factor(comparisons) if sig == "exact_factor" else None
    if factor is None and sig in ("exact_factor", "subtly_wrong", "sparse"):
        factor = joint_factor(doc)
    cited, note = factor_evidence(factor, seeds, reduction=not ctx.facts("launches").get("failing"), extents=extents)
    a = Assessment(cited=cited)
    if note:
        a.add("fd", False, f"exact factor {factor:.6g}: {note}", {"factor": factor})
    return a


def zero_params_bug_evidence(doc: dict, ctx: AssessContext) -> Assessment:
    """``param_gradient_zero`` (and its sentence) when autodiff is exactly zero for some params
    where finite differences are not, and the signature (``ctx.signature``) is not already ``zero``."""
    a = Assessment()
    zp = zero_params(doc)
    if zp and ctx.signature != "zero":
        a.add("fd", False, "autodiff is exactly zero for param(s) " + ", ".join(zp) +
              " where finite differences are not", {"params": zp})
        a.cited.append(Evidence("param_gradient_zero", "fd", data={"params": zp}))
    return a
