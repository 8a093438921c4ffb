"""The oracle's measurement subprocess: ``python -m defects4warp.oracle.worker``.

Runs one variant folder in a fresh interpreter (the per-release one for
``--warp`` releases) and writes one JSON document (and optionally an ``.npz``
of the raw arrays). It imports only the standard library, NumPy, Warp and
:mod:`defects4warp.problem` (the loader of the Problem protocol) plus the oracle's
own :mod:`defects4warp.oracle.numerics`; nothing from the reference engine.

Usage::

    python -m defects4warp.oracle.worker PATH --out DOC.json [--device cpu]
        [--scale small] [--arrays RAW.npz] [--point X0.npz] [--knobs JSON] [--replay RECORD.json]

Method (docs/oracle.md gives the full description):

1. Import the variant and call ``make_problem`` (a script variant: replay
   the script from its record, :mod:`defects4warp.oracle.replay`); a Warp
   build or codegen error in any stage (import, make_problem, replay,
   objective, gradient) makes the verdict ``refused``; any other exception
   ``error``.
2. ``objective()`` at the point, repeated; when it is not repeatable and
   the problem has ``set_seed``, the seed is pinned (``set_seed(seed)``
   before every evaluation and gradient call).
3. Noise of the objective: ECnoise (Moré & Wild 2011) on 9 points along a
   random Rademacher direction with relative spacing ``sqrt(eps)``, the
   spread of repeated evaluations and one ulp of the objective's value; the
   noise bound ``sigma`` is the largest of the three.
4. ``gradient()`` three times at the same point, NaN/inf scan, and
   ``reference_gradient()`` where present.
5. Central finite differences on every coordinate (up to ``max_full``), or a
   deterministic sample, with per-coordinate steps and refinement
   (:func:`defects4warp.oracle.numerics.pick_estimate`).
6. Each item: resolution ``r = k_sigma * sigma / h``; unresolved when both
   ``|FD|`` and ``|AD|`` are at most ``r``; otherwise it agrees when
   ``|AD - FD| <= r + d + rtol * max(|FD|, |AD|)`` (``d``: the disagreement
   of the two best steps).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
import traceback

import numpy as np

from ..kernel_cache import private_kernel_cache
from .numerics import ecnoise, initial_step, param_scale, pick_estimate, unit_ulp

ORACLE_VERSION = "1"

#: Default knobs (keyword parameters of :func:`defects4warp.oracle.measure_variant`).
#: Each is documented in docs/oracle.md with its source.
DEFAULT_KNOBS = {
    "max_full": 10_000,          # all coordinates up to this many parameters
    "sample_coords": 256,        # above max_full: coordinates drawn without replacement ...
    "sample_dirs": 8,            # ... plus random unit directions (Gaussian, normalised)
    "sample_seed": 20111,        # fixed seed of the sample and of the ECnoise direction
    "k_sigma": 3.0,              # resolution = k_sigma * noise sigma / h (a 3-sigma bound)
    "rtol32": 1e-3,              # AD's own rounding allowance, float32 parameters
    "rtol64": 1e-6,              # ... float64 parameters
    "min_resolved": 1,           # "agrees" needs at least this many resolved items ...
    "min_resolved_fraction": 0.0,  # ... and at least this fraction of the items
    "max_refine": 64,            # coordinates that may get the extra steps 4h and h/16
    "refine_all": False,         # always measure h/16 .. 4h (4 steps), not only on disagreement
    "ecnoise_points": 9,         # Moré & Wild 2011: m + 1 = 9 points
    "objective_repeats": 2,      # extra evaluations at the point (repeatability)
    "gradient_calls": 3,         # calls of gradient() at the same point
    "seed": 1234,                # the seed pinned through set_seed
    "factor_tol": 1e-3,          # exact factor: per-item ratios within this relative spread
    "growth_tol": 1e-3,          # growth: call k / call 1 within this of k or k(k+1)/2
    "use_reference": True,       # judge against reference_gradient() where the problem has one
}


class _Stage(Exception):
    """An exception raised by the variant in a named stage."""

    def __init__(self, stage, exc):
        super().__init__(stage)
        self.stage = stage
        self.exc = exc


def warp_build_error(exc: BaseException) -> bool:
    """True when ``exc`` is Warp refusing to build or run the program.

    That is: its class is one of Warp's codegen errors (``WarpCodegen*``), or
    a frame of its traceback is in Warp's ``codegen.py`` or ``build.py``, or
    in the module loading/code generation functions of Warp's ``context.py``
    (``load``, ``codegen``, ``build``, ``build_module``, ``hash_module``).
    """
    for cls in type(exc).__mro__:
        if cls.__name__.startswith("WarpCodegen"):
            return True
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        fn = code.co_filename.replace("\\", "/")
        if "/warp/" in fn:
            base = fn.rsplit("/", 1)[-1]
            if base in ("codegen.py", "build.py"):
                return True
            if base == "context.py" and code.co_name in ("load", "codegen", "build", "build_module", "hash_module"):
                return True
        tb = tb.tb_next
    return False


def _first_line(exc: BaseException) -> str:
    s = str(exc).strip().splitlines()
    return (s[0] if s else "")[:300]


def _digest(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


class Point:
    """The variant's parameters as flat float64 vectors, and how to set them."""

    def __init__(self, wp, problem):
        self.wp = wp
        self.problem = problem
        self.names = list(problem.params)
        self.arrays = [problem.params[k] for k in self.names]
        views = [a.numpy() for a in self.arrays]
        self.shapes = [v.shape for v in views]
        self.dtypes = [v.dtype for v in views]
        self.x0 = [v.astype(np.float64).ravel().copy() for v in views]
        self.sizes = [v.size for v in self.x0]
        self.offsets = np.cumsum([0] + self.sizes)
        self.scales = [param_scale(x) for x in self.x0]

    @property
    def n(self) -> int:
        return int(self.offsets[-1])

    def set(self, j: int, flat: np.ndarray) -> None:
        self.arrays[j].assign(np.asarray(flat, dtype=self.dtypes[j]).reshape(self.shapes[j]))

    def restore(self) -> None:
        for j in range(len(self.arrays)):
            self.set(j, self.x0[j])

    def flat_ad(self, g: dict) -> np.ndarray:
        out = []
        for k, shape, size in zip(self.names, self.shapes, self.sizes):
            v = np.asarray(g[k], dtype=np.float64)
            if v.size != size:
                raise ValueError(f"gradient()['{k}'] has {v.size} entries, params['{k}'] has {size} (shape {shape})")
            out.append(v.ravel())
        return np.concatenate(out)

    def current(self) -> list:
        return [a.numpy().astype(np.float64).ravel() for a in self.arrays]


class Measure:
    """One variant's measurement (runs inside the worker process)."""

    def __init__(self, wp, problem, knobs):
        self.wp = wp
        self.p = problem
        self.k = knobs
        self.pt = Point(wp, problem)
        self.pinned = False
        self.evals = 0
        self.f32 = any(d == np.float32 for d in self.pt.dtypes)
        self.eps = float(np.finfo(np.float32 if self.f32 else np.float64).eps)
        self.rtol = knobs["rtol32"] if self.f32 else knobs["rtol64"]
        self.f0 = None
        self.last_sides = None

    # -- evaluations -------------------------------------------------------
    def f(self) -> float:
        if self.pinned:
            self.p.set_seed(self.k["seed"])
        self.evals += 1
        try:
            return float(self.p.objective())
        except Exception as exc:  # noqa: BLE001
            raise _Stage("objective", exc) from exc

    def grad(self) -> np.ndarray:
        if self.pinned:
            self.p.set_seed(self.k["seed"])
        try:
            g = self.p.gradient()
        except Exception as exc:  # noqa: BLE001
            raise _Stage("gradient", exc) from exc
        return self.pt.flat_ad(g)

    def f_at(self, j: int, flat: np.ndarray) -> float:
        self.pt.set(j, flat)
        try:
            return self.f()
        finally:
            self.pt.set(j, self.pt.x0[j])

    def f_along(self, direction: list, t: float) -> float:
        for j, d in enumerate(direction):
            self.pt.set(j, self.pt.x0[j] + t * d)
        try:
            return self.f()
        finally:
            self.pt.restore()

    # -- finite differences ------------------------------------------------
    def central_coord(self, j: int, i: int, h: float) -> tuple:
        """(D, effective half step) for coordinate i of param j."""
        x = self.pt.x0[j].copy()
        dt = self.pt.dtypes[j]
        xi = x[i]
        xp = float(np.asarray(xi + h, dtype=dt))
        xm = float(np.asarray(xi - h, dtype=dt))
        den = xp - xm
        if den == 0.0:
            return math.nan, 0.0
        x[i] = xp
        fp = self.f_at(j, x)
        x[i] = xm
        fm = self.f_at(j, x)
        self.last_sides = (fp, fm, xp - xi, xi - xm)
        return (fp - fm) / den, den / 2.0

    def central_dir(self, direction: list, h: float) -> tuple:
        fp = self.f_along(direction, h)
        fm = self.f_along(direction, -h)
        return (fp - fm) / (2.0 * h), h

    def fd_item(self, measure, h0: float, noise: float, allow_refine: bool) -> dict:
        est, sides = {}, {}
        for h in ((h0 / 16, h0 / 4, h0, h0 * 4) if self.k["refine_all"] else (h0 / 4, h0)):
            self.last_sides = None
            d, he = measure(h)
            if he > 0:
                est[he] = d
                if self.last_sides is not None:
                    sides[he] = self.last_sides
        refined = False
        hs = sorted(est)
        if not self.k["refine_all"] and allow_refine and len(hs) == 2:
            a, b = hs
            if abs(est[a] - est[b]) > self.k["k_sigma"] * (noise / a + noise / b):
                refined = True
                for h in (h0 * 4, h0 / 16):
                    d, he = measure(h)
                    if he > 0:
                        est[he] = d
        value, h, dis = pick_estimate(est, self.k["k_sigma"] * noise)
        return {"fd": value, "h": h, "dis": dis, "refined": refined, "steps": len(est),
                "kink": self.one_sided(sides, noise)}

    def one_sided(self, sides: dict, noise: float):
        """Left and right one-sided slopes at the two smallest steps when the
        point is a kink: both slopes stable across the steps (within noise and
        a relative 1e-2), and their jump not shrinking with the step (a smooth
        point's jump is f'' h, 4x smaller at h/4). None otherwise."""
        if self.f0 is None or len(sides) < 2:
            return None
        hs = sorted(sides)[:2]
        k = self.k["k_sigma"]
        R, L, tol = [], [], []
        for h in hs:
            fp, fm, hp, hm = sides[h]
            if hp <= 0 or hm <= 0:
                return None
            R.append((fp - self.f0) / hp)
            L.append((self.f0 - fm) / hm)
            tol.append(2 * k * noise / min(hp, hm))
        stable = all(abs(S[0] - S[1]) <= tol[0] + tol[1] + 1e-2 * max(abs(S[0]), abs(S[1])) for S in (R, L))
        jumps = [abs(R[0] - L[0]), abs(R[1] - L[1])]
        if not stable or min(jumps) <= 2 * (tol[0] + tol[1]) or max(jumps) > 1.5 * min(jumps):
            return None
        return {"right": R[0], "left": L[0], "tol": tol[0] + tol[1] + abs(R[0] - R[1]) + abs(L[0] - L[1])}


def _load_problem(path, device, scale, replay):
    """The Problem of a variant: ``make_problem(device, scale)`` of its ``problem.py``, or, with ``replay``
    (a script variant's replay record, docs/oracle.md "Script variants"), the oracle's own replay of the
    script (:class:`defects4warp.oracle.replay.ReplayProblem`, checked at the record's point). A record whose
    capture failed: the script is run to its first backward, and Warp refusing to build it there is a
    refusal; anything else is an error naming the capture's message."""
    from ..problem import check_problem, import_variant

    if replay is not None:
        from .replay import ReplayProblem, run_until_first_backward

        if replay.get("error"):
            err = replay["error"]
            if not replay.get("entry_file"):
                raise _Stage("capture", RuntimeError(f"{err.get('type')}: {err.get('message')}"))
            try:
                ended = run_until_first_backward(path, replay, device)
            except Exception as exc:  # noqa: BLE001 - the script's own error, judged by warp_build_error
                raise _Stage("script", exc) from exc
            raise _Stage("capture", RuntimeError(f"{err.get('type')}: {err.get('message')} (the script itself "
                                                 f"ran to {ended} here)"))
        try:
            problem = ReplayProblem(path, replay, device)
        except Exception as exc:  # noqa: BLE001 - a ReplayError, or the script's own error
            raise _Stage("replay", exc) from exc
        try:
            return problem, check_problem(problem)
        except Exception as exc:  # noqa: BLE001
            raise _Stage("replay", exc) from exc
    try:
        module = import_variant(path)
    except Exception as exc:  # noqa: BLE001
        raise _Stage("import", exc) from exc
    try:
        problem = module.make_problem(device, scale)
        return problem, check_problem(problem)
    except Exception as exc:  # noqa: BLE001
        raise _Stage("make_problem", exc) from exc


def _run(path, device, scale, knobs, point_file, doc, raw, replay=None):
    """Measure one variant into ``doc`` (and the raw arrays into ``raw``): load, objective, noise, gradient
    calls, finite differences, judgement (the method in the module docstring). Raises :class:`_Stage`."""
    t0 = time.perf_counter()
    problem, info, m = _load(path, device, scale, knobs, point_file, doc, replay, t0)
    pt = m.pt
    measured = _objective(m, info, knobs, doc)
    if measured is None:
        return
    f0, spread = measured
    rng = np.random.default_rng(knobs["sample_seed"])
    sigma = _noise(m, f0, spread, rng, knobs, doc)
    ads, finite, ref = _gradient_calls(m, problem, info, knobs, doc)
    items, coords, dirs, sampled, ndirs = _fd_items(m, ads, ref, sigma, rng, knobs)
    if ref is not None:
        # the same items judged by finite differences alone, for the record
        alone = {}
        judge(alone, items, ads, finite, None, sigma, m, knobs, sampled, len(coords), ndirs)
        doc["fd_only"] = {k: alone.get(k) for k in ("verdict", "signature", "resolved", "unresolved",
                                                     "max_relative_error")}
        doc["fd_only"]["kink_items"] = alone["fd"]["kink_items"]
    judge(doc, items, ads, finite, ref, sigma, m, knobs, sampled, len(coords), ndirs)
    doc["cost"]["objective_evals"] = m.evals
    doc["cost"]["gradient_calls"] = len(ads)
    if raw is not None:
        _fill_raw(raw, pt, ads, coords, items, dirs, ref)


def _load(path, device, scale, knobs, point_file, doc, replay, t0):
    """Import and initialise Warp, load the Problem and set the point: ``(problem, protocol info, Measure)``."""
    try:
        import warp as wp
    except Exception as exc:  # noqa: BLE001
        raise _Stage("import warp", exc) from exc
    wp.config.quiet = True
    doc["warp_version"] = getattr(wp.config, "version", None)
    try:
        wp.init()
    except Exception as exc:  # noqa: BLE001
        raise _Stage("warp init", exc) from exc
    problem, info = _load_problem(path, device, scale, replay)
    if replay is not None:
        doc["capture"] = replay.get("summary")
        doc["replay"] = {"reproduced": getattr(problem, "reproduced", None), "runs": getattr(problem, "runs", None)}
    m = Measure(wp, problem, knobs)
    pt = m.pt
    if point_file:
        data = np.load(point_file)
        for j, k in enumerate(pt.names):
            key = f"x0/{k}"
            if key not in data or data[key].size != pt.sizes[j]:
                raise _Stage("point", ValueError(f"the point file has no '{k}' of {pt.sizes[j]} entries"))
            pt.x0[j] = np.asarray(data[key], dtype=np.float64).ravel().copy()
        pt.restore()
        pt.x0 = [x.astype(pt.dtypes[j]).astype(np.float64) for j, x in enumerate(pt.x0)]
    doc["params"] = {k: {"shape": list(s), "dtype": str(d), "size": int(n), "digest": _digest(x)}
                     for k, s, d, n, x in zip(pt.names, pt.shapes, pt.dtypes, pt.sizes, pt.x0)}
    doc["protocol"] = {"optional": info["optional"]}
    doc["cost"]["load_s"] = time.perf_counter() - t0
    return problem, info, m


def _objective(m, info, knobs, doc):
    """The objective at the point, repeated (seed pinned when needed): ``(f0, repeat spread)``, or None (the
    verdict set to error) when it is not finite."""
    f0 = m.f()
    reps = [m.f() for _ in range(knobs["objective_repeats"])]
    repeatable = all(r == f0 or (math.isnan(r) and math.isnan(f0)) for r in reps)
    has_seed = bool(info["optional"].get("set_seed"))
    if not repeatable and has_seed:
        m.pinned = True
        f0 = m.f()
        reps = [m.f() for _ in range(knobs["objective_repeats"])]
    m.f0 = f0
    spread = float(np.std([f0] + reps)) if all(math.isfinite(v) for v in [f0] + reps) else math.inf
    obj = {"value": f0, "finite": math.isfinite(f0), "repeatable": repeatable, "seed_pinned": m.pinned,
           "repeat_spread": spread, "precision": "float32" if m.f32 else "float64"}
    doc["objective"] = obj
    if not obj["finite"]:
        doc["verdict"] = "error"
        doc["message"] = f"objective() is not finite at the point ({f0})"
        return None
    return f0, spread


def _noise(m, f0, spread, rng, knobs, doc):
    """The noise bound ``sigma`` of the objective (ECnoise, repeat spread, one ulp), recorded in ``doc``."""
    pt = m.pt
    npts = knobs["ecnoise_points"]
    delta = math.sqrt(m.eps)
    direction = [rng.choice([-1.0, 1.0], size=n) * delta * np.maximum(np.abs(x), s)
                 for n, x, s in zip(pt.sizes, pt.x0, pt.scales)]
    ts = np.arange(npts) - (npts - 1) / 2.0
    fline = [m.f_along(direction, float(t)) if t != 0 else f0 for t in ts]
    ec = ecnoise(fline)
    ulp = unit_ulp(f0, np.float32 if m.f32 else np.float64)
    sigma = max(ec["sigma"], spread, ulp)
    doc["noise"] = {"sigma": sigma, "ecnoise_sigma": ec["sigma"], "ecnoise_order": ec["order"],
                    "ecnoise_method": ec["method"], "ecnoise_relative_spacing": delta, "repeat_spread": spread,
                    "ulp": ulp, "relative": sigma / abs(f0) if f0 else None}
    return sigma


def _gradient_calls(m, problem, info, knobs, doc):
    """``gradient()`` at the point ``knobs["gradient_calls"]`` times, and the reference gradient where used:
    ``(ads, finite per call, ref or None)``."""
    pt = m.pt
    ads = []
    tg = time.perf_counter()
    for c in range(knobs["gradient_calls"]):
        g = m.grad()
        now = pt.current()
        if any(not np.array_equal(a.astype(d).astype(np.float64), b)
               for a, b, d in zip(pt.x0, now, pt.dtypes)):
            doc.setdefault("warnings", []).append(f"gradient() call {c + 1} changed params; restored")
            pt.restore()
        ads.append(g)
    doc["cost"]["gradient_call_s"] = (time.perf_counter() - tg) / max(1, len(ads))
    ads = np.array(ads)
    finite = [bool(np.all(np.isfinite(a))) for a in ads]
    ref = None
    if info["optional"].get("reference_gradient") and knobs["use_reference"]:
        try:
            ref = pt.flat_ad(problem.reference_gradient())
        except Exception as exc:  # noqa: BLE001
            raise _Stage("reference_gradient", exc) from exc
    return ads, finite, ref


def _fd_items(m, ads, ref, sigma, rng, knobs):
    """Finite differences on every coordinate or a sample plus random directions:
    ``(items, coords, directions, sampled, ndirs)``."""
    pt = m.pt
    n = pt.n
    sampled = n > knobs["max_full"]
    if sampled:
        coords = np.sort(rng.choice(n, size=min(knobs["sample_coords"], n), replace=False))
        ndirs = knobs["sample_dirs"]
    else:
        coords = np.arange(n)
        ndirs = 0
    items = []
    refine_left = knobs["max_refine"]
    for flat in coords:
        j = int(np.searchsorted(pt.offsets, flat, side="right") - 1)
        i = int(flat - pt.offsets[j])
        h0 = initial_step(pt.x0[j][i], pt.scales[j], m.eps)
        it = m.fd_item(lambda h, j=j, i=i: m.central_coord(j, i, h), h0, sigma, refine_left > 0)
        refine_left -= int(it["refined"])
        it.update({"kind": "coord", "param": pt.names[j], "index": i,
                   "ad": [float(a[flat]) for a in ads], "ref": None if ref is None else float(ref[flat])})
        items.append(it)
    dirs = []
    for _ in range(ndirs):
        z = [rng.standard_normal(s) for s in pt.sizes]
        norm = math.sqrt(sum(float(v @ v) for v in z))
        z = [v / norm for v in z]
        dirs.append(np.concatenate(z))
        h0 = m.eps ** (1.0 / 3.0) * float(np.mean(pt.scales))
        it = m.fd_item(lambda h, z=z: m.central_dir(z, h), h0, sigma, refine_left > 0)
        refine_left -= int(it["refined"])
        it.update({"kind": "direction", "param": None, "index": len(dirs) - 1,
                   "ad": [float(a @ dirs[-1]) for a in ads],
                   "ref": None if ref is None else float(ref @ dirs[-1])})
        items.append(it)
    pt.restore()
    return items, coords, dirs, sampled, ndirs


def _fill_raw(raw, pt, ads, coords, items, dirs, ref):
    """The raw arrays of the measurement (``--arrays``)."""
    raw.update({f"x0/{k}": x for k, x in zip(pt.names, pt.x0)})
    raw["ad"] = ads
    raw["coords"] = coords
    raw["fd"] = np.array([it["fd"] for it in items])
    raw["uncertainty"] = np.array([it["u"] for it in items])
    raw["resolution"] = np.array([it["r"] for it in items])
    raw["resolved"] = np.array([it["resolved"] for it in items])
    if dirs:
        raw["directions"] = np.array(dirs)
    if ref is not None:
        raw["ref"] = ref


def _agree(ad, truth, tol):
    return abs(ad - truth) <= tol


def judge(doc, items, ads, finite, ref, sigma, m, knobs, sampled, ncoords, ndirs):
    """Fill the verdict, signature and per-item statistics into ``doc``."""
    rtol = m.rtol
    k_sigma = knobs["k_sigma"]
    _resolve_items(items, sigma, k_sigma)
    fd_res = [it for it in items if it["resolved"]]
    doc["fd"] = {"items": len(items), "coordinates": ncoords, "directions": ndirs, "sampled": sampled,
                 "resolved": len(fd_res), "unresolved": len(items) - len(fd_res),
                 "refined": sum(it["refined"] for it in items), "rtol": rtol, "k_sigma": k_sigma,
                 "median_resolution": float(np.median([it["r"] for it in items])) if items else None}

    # truth per item: the reference where present (exact, resolution 0), else FD
    use_ref = ref is not None
    truth_kind = "reference" if use_ref else "finite_differences"
    rows = []
    for it in items:
        if use_ref:
            t, tol_abs, res = it["ref"], 0.0, True
        else:
            t, tol_abs, res = it["fd"], it["u"], it["resolved"]
        rows.append((t, tol_abs, res, it))
    calls, bad_any, kinks = _judge_calls(rows, ads, finite, use_ref, rtol)
    n_res = sum(1 for r in rows if r[2])
    doc["truth"] = truth_kind
    doc["calls"] = calls
    doc["resolved"] = n_res
    doc["unresolved"] = len(rows) - n_res
    doc["fd"]["kink_items"] = len(kinks)
    errs = [c["max_relative_error"] for c in calls if c["max_relative_error"] is not None]
    doc["max_relative_error"] = max(errs) if errs else None
    if use_ref:
        doc["fd_vs_reference"] = _fd_vs_reference(fd_res, rtol)
    growth = _repeat_calls(doc, ads)  # growth / iteration at the same point
    _verdict(doc, finite, bad_any, rows, ads, growth, knobs, n_res)


def _resolve_items(items, sigma, k_sigma):
    """Each item's resolution ``r``, uncertainty ``u`` and whether FD or the first call's AD is above ``r``."""
    for it in items:
        h = it["h"]
        r = k_sigma * sigma / h if h and math.isfinite(h) and h > 0 else math.inf
        it["r"] = r
        u = r + (it["dis"] if math.isfinite(it["dis"]) else math.inf)
        it["u"] = u
        fd = it["fd"]
        it["resolved"] = bool(math.isfinite(fd) and (abs(fd) > r or abs(it["ad"][0]) > r))


def _judge_calls(rows, ads, finite, use_ref, rtol):
    """Judge each gradient call's items against the truth: ``(per-call rows, disagreeing items per call,
    ids of items agreeing only through a kink's one-sided derivative)``."""
    ncalls = len(ads)
    calls = []
    bad_any = []
    kinks = set()
    for c in range(ncalls):
        bad, errs = [], []
        for t, tol_abs, res, it in rows:
            a = it["ad"][c]
            if not math.isfinite(a):
                bad.append(it)
                errs.append(math.inf)
                continue
            if not use_ref:
                # resolved on this call: FD or this call's AD above the resolution
                res = bool(math.isfinite(t) and (abs(t) > it["r"] or abs(a) > it["r"]))
            if not res:
                continue
            tol = tol_abs + rtol * max(abs(t), abs(a))
            ok = _agree(a, t, tol)
            kk = it.get("kink")
            if not ok and not use_ref and kk is not None:
                # at a kink a one-sided derivative is a valid gradient (nonsmooth_tie)
                ok = any(abs(a - s) <= kk["tol"] + rtol * max(abs(s), abs(a)) for s in (kk["left"], kk["right"]))
                if ok:
                    kinks.add(id(it))
            denom = max(abs(t), tol_abs, 1e-300)
            if id(it) in kinks and ok:
                errs.append(min(abs(a - s) / max(abs(s), tol_abs, 1e-300) for s in (kk["left"], kk["right"])))
            else:
                errs.append(abs(a - t) / denom)
            if not ok:
                bad.append(it)
        calls.append({"call": c + 1, "finite": finite[c], "disagree": len(bad),
                      "max_relative_error": max(errs) if errs else None})
        bad_any.append(bad)
    return calls, bad_any, kinks


def _fd_vs_reference(fd_res, rtol):
    """How many FD-resolved items disagree with the reference gradient (kinks allowed either side)."""
    fr = [it for it in fd_res]
    def fd_agrees(it):
        if abs(it["fd"] - it["ref"]) <= it["u"] + rtol * abs(it["ref"]):
            return True
        kk = it.get("kink")
        return kk is not None and any(abs(it["ref"] - s) <= kk["tol"] + rtol * abs(s)
                                      for s in (kk["left"], kk["right"]))

    dis = sum(1 for it in fr if not fd_agrees(it))
    return {"resolved": len(fr), "disagree": dis}


def _repeat_calls(doc, ads):
    """Ratios of the later calls' gradients to call 1's at the same point (``doc["repeat_calls"]``): the growth."""
    ncalls = len(ads)
    g1 = ads[0]
    nz = np.abs(g1) > 0
    growth = {}
    for c in range(1, ncalls):
        if np.any(nz) and np.all(np.isfinite(ads[c])):
            rr = ads[c][nz] / g1[nz]
            growth[c + 1] = {"median": float(np.median(rr)), "spread": float(np.max(np.abs(rr - np.median(rr))))}
    doc["repeat_calls"] = {"ratios_to_call_1": growth,
                           "max_relative_change": float(max((np.max(np.abs(a - g1)) / max(np.max(np.abs(g1)), 1e-300)
                                                             for a in ads[1:]), default=0.0))
                           if np.all(np.isfinite(ads)) else None}
    return growth


def _verdict(doc, finite, bad_any, rows, ads, growth, knobs, n_res):
    """Set the verdict and signature: wrong (NaN, or a disagreeing item), agrees, or unresolved."""
    if not all(finite):
        doc["verdict"] = "wrong"
        doc["signature"] = {"kind": "nan", "calls": [c + 1 for c, f in enumerate(finite) if not f]}
        return
    if any(bad_any):
        doc["verdict"] = "wrong"
        doc["signature"] = _signature(bad_any, rows, ads, growth, knobs)
        return
    need = max(knobs["min_resolved"], math.ceil(knobs["min_resolved_fraction"] * len(rows)))
    if n_res >= need:
        doc["verdict"] = "agrees"
        doc["signature"] = {"kind": "none"}
    else:
        doc["verdict"] = "unresolved"
        doc["signature"] = {"kind": "none"}
        doc["message"] = f"{n_res} of {len(rows)} items resolved (at least {need} needed)"


def _signature(bad_any, rows, ads, growth, knobs):
    first_bad = next(c for c, b in enumerate(bad_any) if b)
    if first_bad > 0:
        # call 1 agrees; later calls at the same point do not
        tol = knobs["growth_tol"]
        pat = []
        for c, gr in sorted(growth.items()):
            pat.append(gr["median"] if gr["spread"] <= tol * max(abs(gr["median"]), 1.0) else None)
        ks = sorted(growth)
        lin = all(p is not None and abs(p - k) <= tol * k for p, k in zip(pat, ks))
        tri = all(p is not None and abs(p - k * (k + 1) / 2) <= tol * k * k for p, k in zip(pat, ks))
        if pat and (lin or tri):
            return {"kind": "growth", "ratios": pat, "pattern": "k" if lin else "k(k+1)/2", "first_bad_call": first_bad + 1}
        return {"kind": "iteration", "first_bad_call": first_bad + 1}
    bad = bad_any[0]
    if all(it["ad"][0] == 0.0 for it in bad):
        return {"kind": "zero", "zero_items": len(bad)}
    # exact factor over every resolved item whose truth is well above its uncertainty
    ratios, tols = [], []
    for t, tol_abs, res, it in rows:
        if res and t != 0 and abs(t) > 3 * tol_abs:
            ratios.append(it["ad"][0] / t)
            tols.append(knobs["factor_tol"] + 3 * tol_abs / abs(t))
    if ratios:
        med = float(np.median(ratios))
        spread = max(abs(r - med) for r in ratios)
        if med != 0 and all(abs(r - med) <= tl * abs(med) for r, tl in zip(ratios, tols)) \
                and abs(med - 1.0) > knobs["factor_tol"]:
            return {"kind": "factor", "ratio": med, "spread": spread, "items": len(ratios)}
    n_res = sum(1 for r in rows if r[2])
    sparse = n_res >= 4 and len(bad) <= 0.25 * n_res
    return {"kind": "other", "detail": "sparse" if sparse else "subtle", "disagree": len(bad), "resolved": n_res}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m defects4warp.oracle.worker")
    ap.add_argument("path")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--scale", default="small")
    ap.add_argument("--arrays", default=None)
    ap.add_argument("--point", default=None)
    ap.add_argument("--knobs", default="{}")
    ap.add_argument("--replay", default=None, help="a script variant's replay record (JSON file): replay the script")
    a = ap.parse_args(argv)
    knobs = dict(DEFAULT_KNOBS)
    knobs.update(json.loads(a.knobs))
    doc = {"oracle_version": ORACLE_VERSION, "verdict": None, "device": a.device, "scale": a.scale,
           "warp_version": None, "knobs": knobs, "cost": {}}
    raw = {} if a.arrays else None
    t0 = time.perf_counter()
    kcache = private_kernel_cache()
    try:
        replay = None
        if a.replay:
            with open(a.replay) as f:
                replay = json.load(f)
        _run(a.path, a.device, a.scale, knobs, a.point, doc, raw, replay)
    except _Stage as st:
        exc = st.exc
        refused = warp_build_error(exc)
        doc["verdict"] = "refused" if refused else "error"
        doc["failure"] = {"stage": st.stage, "type": f"{type(exc).__module__}.{type(exc).__qualname__}",
                          "first_line": _first_line(exc),
                          "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__,
                                                                          limit=-6))[-3000:]}
        doc["message"] = f"{st.stage}: {type(exc).__name__}: {_first_line(exc)}"
    except Exception as exc:  # noqa: BLE001 - an oracle bug is an error verdict, not a crash
        doc["verdict"] = "error"
        doc["failure"] = {"stage": "oracle", "type": type(exc).__qualname__, "first_line": _first_line(exc),
                          "traceback": traceback.format_exc(limit=-6)[-3000:]}
        doc["message"] = f"oracle: {type(exc).__name__}: {_first_line(exc)}"
    doc["cost"]["wall_s"] = time.perf_counter() - t0
    if kcache is not None:
        kcache.cleanup()
    tmp = a.out + ".part"
    with open(tmp, "w") as f:
        json.dump(_jsonable(doc), f, allow_nan=False, default=str)
    os.replace(tmp, a.out)
    if raw:
        np.savez(a.arrays, **raw)
    return 0


def _jsonable(x):
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.floating,)):
        return _jsonable(float(x))
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


if __name__ == "__main__":
    sys.exit(main())
