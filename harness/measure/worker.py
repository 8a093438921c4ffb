"""Measurement subprocess: load one variant and measure its gradient.

Run as ``python -m harness.measure.worker PATH --device cpu --scale small
--out RESULT.json [--options JSON]``. It imports the variant's
``problem.py`` (so a crash, hang or memory blow-up stays in this process) and
runs the probes in order:

1. ``protocol``      check the Problem members;
2. ``determinism``   objective twice (pins the seed through ``set_seed`` when
                     the forward is stochastic); ``calls`` gradient calls at
                     the same point (growth, iteration dependence);
3. ``tracker``       Warp's overwrite tracker (``wp.config.
                     verify_autograd_array_access``) warnings, captured over
                     the whole run and tagged with the stage that raised them;
4. ``fd``            central finite differences over sampled coordinates and
                     random directions, at the given point and at a perturbed
                     point, compared per element with every gradient call;
5. ``reference``     comparison with ``reference_gradient()`` when provided;
6. ``nan_scan``      NaN/inf in objective and gradients;
7. ``horizon``       where the problem has an integer ``steps``, bisection
                     for the first horizon at which autodiff and finite
                     differences part (only when they do);
8. ``launches``      per-launch check: every distinct kernel the first
                     ``gradient()`` call recorded on a tape is checked in
                     isolation with ``wp.autograd.gradcheck`` (Jacobian by
                     autodiff vs finite differences, at the arrays' current
                     contents). Runs last: it launches kernels on the user's
                     arrays.

The result is one JSON document (schema: the keys written below), rewritten
atomically after every probe, so what was measured survives a later crash.
Probes return data; judging it is the engine's (or ``validate``'s) business.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

from . import compare
from .params import FlatParams

#: Default probe settings. ``max_coords``: coordinates checked one by one at
#: the given point (all when the problem has at most this many); ``dirs``:
#: random directions there; ``perturbed_*``: the same at the perturbed point,
#: ``perturb`` times each element's scale away; ``calls``: gradient calls at
#: the given point; ``sweep_coords``: disagreeing coordinates re-measured at
#: several steps (only when there is a disagreement). The defaults cost at most
#: 2 + 2*(12+2) + 2*(3+1) = 38 objective evaluations (plus 1 + 6 per swept
#: coordinate and 2 per horizon bisection step, only when autodiff disagrees)
#: and calls + 1 gradient evaluations (the budget is a median of 40 objective
#: evaluations per variant).
DEFAULTS = {
    "max_coords": 12,
    "dirs": 2,
    "perturbed_coords": 3,
    "perturbed_dirs": 1,
    "perturb": 0.05,
    "calls": 3,
    "seed": 0,
    "tracker": True,
    "pinned_seed": 1234,
    "fd": True,
    "launch_check": True,
    "max_launch_kernels": 8,
    "max_launch_scalars": 1024,
    "sweep_coords": 3,
    "horizon": True,
}

#: Step factors of the sweep, relative to the base step (smallest first).
SWEEP_STEPS = (0.01, 0.1, 1.0)
#: Step factors when finite differences disagree with reference_gradient():
#: larger steps too, since float32 cancellation improves with a larger step.
REFERENCE_SWEEP_STEPS = (0.01, 0.1, 1.0, 10.0, 100.0)

#: Relative difference between two objective() calls below which the forward
#: counts as deterministic (float atomics on a GPU reorder sums: ~1e-7 in float32).
JITTER_RTOL = 1e-6

TRACKER_PATTERNS = [
    (
        "launch",
        re.compile(
            r"Array (?P<array>[^\n]*?(?:\n[^\n]*?)*?) ?passed to argument (?P<arg>\w+) in kernel (?P<kernel>\w+) at "
            r"(?P<file>[^\n]+?):(?P<line>\d+) is being written to but has already been read"
        ),
    ),
    (
        "same_kernel",
        re.compile(
            r"Array passed to argument (?P<arg>\w+) in kernel (?P<kernel>\w+) at "
            r"(?P<file>.+?):(?P<line>\d+) is being written to after it has been read from within the same kernel"
        ),
    ),
    (
        "operation",
        re.compile(
            r"Array (?P<array>[^\n]*?(?:\n[^\n]*?)*?) is being written to by (?P<op>[^\n]+?) at "
            r"(?P<file>[^\n]+?):(?P<line>\d+) but has already been read"
        ),
    ),
    ("unattributed", re.compile(r"Array (?P<array>[^\n]*?(?:\n[^\n]*?)*?) is being written to (?:after|but has already)")),
]
COMPILE_PATTERN = re.compile(r"Module (?P<module>\S+) \S+ load on device '(?P<device>[^']+)' took (?P<ms>[\d.]+) ms\s+\((?P<how>compiled|cached)\)")


def step_size(dtype) -> float:
    """Relative central-difference step: eps^(1/3) of the dtype (Nocedal &
    Wright, *Numerical Optimization*, 2nd ed., eq. 8.8 discussion):
    6.1e-6 for float64, 4.9e-3 for float32."""
    return float(np.finfo(dtype).eps ** (1.0 / 3.0))


def _atomic_write(path: str, doc: dict) -> None:
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".part-", dir=d)
    with os.fdopen(fd, "w") as f:
        json.dump(doc, f, indent=1, default=_json_default)
    os.replace(tmp, path)


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def _finite_or_str(x: float):
    x = float(x)
    return x if np.isfinite(x) else str(x)


class _Capture(io.TextIOBase):
    """A text stream that keeps everything written to it, tagged by stage."""

    def __init__(self):
        self.chunks = []
        self.stage = "load"

    def write(self, s):
        if s:
            self.chunks.append((self.stage, s))
        return len(s)

    def text(self, stage=None):
        return "".join(s for st, s in self.chunks if stage is None or st == stage)


def _written_suffix(kernel, n_args: int) -> int | None:
    """Index where the arguments a kernel writes begin, when they are exactly
    the trailing ones (from the kernel's AST); None otherwise."""
    import ast
    import textwrap

    from .source import kernel_access

    try:
        tree = ast.parse(textwrap.dedent(kernel.adj.source))
        fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    except (AttributeError, SyntaxError, StopIteration, TypeError):
        return None
    params, _, written = kernel_access(fn)
    if not written or len(params) != n_args:
        return None
    first = min(params.index(w) for w in written)
    return first if all(p in written for p in params[first:]) else None


@contextlib.contextmanager
def _capture_launches():
    """Collect the launches any wp.Tape records inside the block (the user's
    tape is created inside gradient(), so the class method is wrapped)."""
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


class Measurement:
    """Runs the probes on one loaded problem and accumulates the result."""

    def __init__(self, problem, out_path: str, options: dict, capture: _Capture, doc: dict):
        self.p = problem
        self.out = out_path
        self.opt = options
        self.cap = capture
        self.doc = doc
        self.flat = FlatParams(problem.params)
        self.rng = np.random.default_rng(options["seed"])
        self.n_obj = 0
        self.n_grad = 0
        self.pinned = False

    # -- helpers -------------------------------------------------------
    def save(self):
        self.doc["cost"].update({"objective_evals": self.n_obj, "gradient_evals": self.n_grad})
        _atomic_write(self.out, self.doc)

    def objective(self) -> float:
        if self.pinned:
            self.p.set_seed(self.opt["pinned_seed"])
        self.n_obj += 1
        return float(self.p.objective())

    def gradient(self) -> np.ndarray:
        if self.pinned:
            self.p.set_seed(self.opt["pinned_seed"])
        self.n_grad += 1
        return self.flat.flatten_gradient(self.p.gradient())

    def stage(self, name):
        self.cap.stage = name
        self.doc["running"] = name

    # -- probes --------------------------------------------------------
    def determinism(self):
        self.stage("objective")
        f1 = self.objective()
        f2 = self.objective()
        rel = abs(f1 - f2) / max(abs(f1), abs(f2), 1e-300) if np.isfinite(f1) and np.isfinite(f2) else 0.0
        stochastic = bool(rel > JITTER_RTOL)
        has_seed = bool(self.doc["protocol"]["optional"].get("set_seed"))
        pinned_ok = None
        if stochastic and has_seed:
            self.pinned = True
            g1 = self.objective()
            g2 = self.objective()
            pinned_ok = bool(g1 == g2)
            if not pinned_ok:
                self.pinned = False
        det = {
            "objective": [_finite_or_str(f1), _finite_or_str(f2)],
            "objective_relative_change": rel,
            "stochastic": stochastic,
            "seed_pinned": self.pinned,
            "pinned_repeatable": pinned_ok,
        }
        self.doc["determinism"] = det
        self.save()
        calls = []
        for k in range(self.opt["calls"]):
            self.stage(f"gradient_{k + 1}")
            t = time.perf_counter()
            if k == 0:
                with _capture_launches() as captured:
                    calls.append(self.gradient())
                self.launches = captured
            else:
                calls.append(self.gradient())
            det.setdefault("gradient_call_s", []).append(time.perf_counter() - t)
        self.stage("probes")
        self.calls = calls
        det["gradient_norms"] = [_finite_or_str(np.linalg.norm(c)) for c in calls]
        det["growth_factors"] = compare.growth_factors(calls)
        det["growth"] = det["growth_factors"] is not None
        det["calls_identical"] = all(compare.calls_identical(calls[0], c) for c in calls[1:])
        det["first_call_differs"] = bool(len(calls) > 1 and not compare.calls_identical(calls[0], calls[1]))
        det["later_calls_zero"] = bool(
            len(calls) > 1 and np.any(calls[0]) and all(not np.any(c) for c in calls[1:])
        )
        self.save()

    def _coords(self, k: int) -> np.ndarray:
        """k coordinates spread over the params (every param gets one when k allows)."""
        n = self.flat.n
        if n <= k:
            return np.arange(n)
        chosen = []
        for i in range(len(self.flat.names)):
            a, b = self.flat.offsets[i], self.flat.offsets[i + 1]
            if len(chosen) < k and b > a:
                chosen.append(int(self.rng.integers(a, b)))
        rest = np.setdiff1d(np.arange(n), chosen)
        chosen += [int(c) for c in self.rng.choice(rest, size=k - len(chosen), replace=False)]
        return np.sort(np.array(chosen))

    def _fd_at(self, x0: np.ndarray, n_coords: int, n_dirs: int) -> dict:
        h = np.array([step_size(self.flat.dtypes[self.flat.names.index(self.flat.owner(i)[0])]) for i in range(self.flat.n)])
        h = h * self.flat.scales()
        coords = self._coords(n_coords)
        fd_c = np.empty(len(coords))
        for j, i in enumerate(coords):
            xp = x0.copy()
            xp[i] += h[i]
            sp = self.flat.set(xp)[i]
            fp = self.objective()
            xm = x0.copy()
            xm[i] -= h[i]
            sm = self.flat.set(xm)[i]
            fm = self.objective()
            fd_c[j] = (fp - fm) / (sp - sm)
        dirs, fd_d = [], []
        for _ in range(n_dirs):
            v = self.rng.standard_normal(self.flat.n)
            v /= max(np.linalg.norm(v), 1e-300) / np.sqrt(self.flat.n)
            xp = self.flat.set(x0 + h * v)
            fp = self.objective()
            xm = self.flat.set(x0 - h * v)
            fm = self.objective()
            dirs.append(xp - xm)
            fd_d.append(fp - fm)
        self.flat.set(x0)
        return {"coords": coords, "fd_coords": fd_c, "dirs": dirs, "fd_dirs": np.array(fd_d)}

    def _compare(self, g: np.ndarray, fd: dict, rtol: float) -> dict:
        coords = fd["coords"]
        per_elem = compare.signature(g[coords], fd["fd_coords"], rtol)
        bad = compare.mismatch(g[coords], fd["fd_coords"], rtol)
        per_elem["mismatched"] = [
            {"param": self.flat.owner(int(i))[0], "index": self.flat.owner(int(i))[1],
             "autodiff": _finite_or_str(g[i]), "fd": float(f)}
            for i, f, b in zip(coords, fd["fd_coords"], bad) if b
        ][:8]
        owners = np.array([self.flat.owner(int(i))[0] for i in coords])
        per_elem["per_param"] = {}
        for k in self.flat.names:
            sel = owners == k
            if np.any(sel):
                ad_k, fd_k = g[coords][sel], fd["fd_coords"][sel]
                per_elem["per_param"][k] = {
                    "signature": compare.signature(ad_k, fd_k, rtol)["signature"],
                    "ad_zero": bool(not np.any(ad_k)),
                    "fd_zero": bool(not np.any(fd_k)),
                }
        ad_d = np.array([float(np.dot(g, d)) if np.all(np.isfinite(g)) else np.nan for d in fd["dirs"]])
        per_dir = compare.signature(ad_d, fd["fd_dirs"], rtol) if len(ad_d) else None
        if per_dir is not None:
            per_dir["autodiff"] = [_finite_or_str(a) for a in ad_d]
            per_dir["fd"] = [float(f) for f in fd["fd_dirs"]]
        return {"elements": per_elem, "directions": per_dir}

    def fd(self):
        if not self.opt["fd"]:
            return
        self.stage("fd")
        o = self.opt
        rtol = compare.rtol_for(self.flat.dtypes)
        x0 = self.flat.get()
        base = self.base_fd = self._fd_at(x0, o["max_coords"], o["dirs"])
        res = {
            "rtol": rtol,
            "n_params": self.flat.n,
            "coords": [{"param": self.flat.owner(int(i))[0], "index": self.flat.owner(int(i))[1]} for i in base["coords"]],
            "fd_norm": float(np.linalg.norm(base["fd_coords"])),
            "fd_all_zero": bool(not np.any(base["fd_coords"])),
            "fd_finite": bool(np.all(np.isfinite(base["fd_coords"]))),
            "calls": [self._compare(g, base, rtol) for g in self.calls],
        }
        self.doc["fd"] = res
        self.save()
        self.sweep(x0, base, rtol)
        if o["perturbed_coords"] or o["perturbed_dirs"]:
            scale = self.flat.scales()
            x1 = self.flat.set(x0 + o["perturb"] * scale * self.rng.standard_normal(self.flat.n))
            self.stage("perturbed")
            try:
                g1 = self.gradient()
                pert = self._fd_at(x1, o["perturbed_coords"], o["perturbed_dirs"])
                res["perturbed"] = self._compare(g1, pert, rtol)
            finally:
                self.flat.set(x0)
                self.stage("probes")
            self.save()

    def _sweep(self, x0: np.ndarray, idx: list, ad: np.ndarray, steps) -> list:
        """One-sided and central differences at ``steps`` times the base step
        for the flat coordinates ``idx``; ``ad`` is the value they are
        compared with (autodiff, or the reference gradient)."""
        f0 = self.objective()
        out = []
        try:
            for i in idx:
                dt = self.flat.dtypes[self.flat.names.index(self.flat.owner(i)[0])]
                h = step_size(dt) * self.flat.scales()[i]
                rec = {"param": self.flat.owner(i)[0], "index": self.flat.owner(i)[1], "autodiff": float(ad[i]),
                       "steps": [], "forward": [], "backward": [], "central": []}
                for k in steps:
                    xp = x0.copy()
                    xp[i] += k * h
                    sp = self.flat.set(xp)[i]
                    fp = self.objective()
                    xm = x0.copy()
                    xm[i] -= k * h
                    sm = self.flat.set(xm)[i]
                    fm = self.objective()
                    rec["steps"].append(float(sp - x0[i]))
                    rec["forward"].append((fp - f0) / (sp - x0[i]))
                    rec["backward"].append((f0 - fm) / (x0[i] - sm))
                    rec["central"].append((fp - fm) / (sp - sm))
                out.append(rec)
        finally:
            self.flat.set(x0)
        return out

    @staticmethod
    def _worst(ad_c: np.ndarray, truth: np.ndarray, coords: np.ndarray, rtol: float, k: int) -> list:
        bad = compare.mismatch(ad_c, truth, rtol)
        err = np.where(bad, np.abs(np.nan_to_num(ad_c, nan=np.inf) - truth), -1.0)
        return [int(coords[j]) for j in np.argsort(-err) if bad[j]][:k]

    def sweep(self, x0: np.ndarray, base: dict, rtol: float):
        """Step sweep at the worst disagreeing coordinates of call 1: one-sided
        and central differences at ``SWEEP_STEPS`` times the base step, to tell
        a staircase or a kink (finite differences fooled) from a smooth error."""
        coords = base["coords"]
        g = self.calls[0]
        idx = self._worst(g[coords], base["fd_coords"], coords, rtol, self.opt["sweep_coords"])
        if not idx:
            return
        self.stage("sweep")
        out = self._sweep(x0, idx, g, SWEEP_STEPS)
        for rec in out:
            rec["verdict"] = compare.one_sided(rec["autodiff"], rec["forward"], rec["backward"], rtol)
        self.stage("probes")
        self.doc["fd"]["sweep"] = {"coords": out,
                                   "n_mismatch": int(compare.mismatch(g[coords], base["fd_coords"], rtol).sum())}
        self.save()

    def horizon(self):
        """Bisect the horizon (``problem.steps``) for the first step count at
        which autodiff and finite differences part, along one random direction
        (2 objective evaluations and 1 gradient per step count tried). Runs
        only when call 1 disagrees and the calls agree with each other (state
        carried between calls would mix into the comparison)."""
        steps = getattr(self.p, "steps", None)
        det = self.doc.get("determinism", {})
        fd = self.doc.get("fd") or {}
        if (not self.opt["horizon"] or not isinstance(steps, int) or isinstance(steps, bool) or steps < 2
                or not det.get("calls_identical") or not fd.get("calls")):
            return
        first = fd["calls"][0]
        if first["elements"]["signature"] == "agrees" and (first.get("directions") or {}).get("signature", "agrees") == "agrees":
            return
        self.stage("horizon")
        rtol = compare.rtol_for(self.flat.dtypes)
        x0 = self.flat.get()
        h = np.array([step_size(self.flat.dtypes[self.flat.names.index(self.flat.owner(i)[0])])
                      for i in range(self.flat.n)]) * self.flat.scales()
        v = np.random.default_rng(self.opt["seed"] + 1).standard_normal(self.flat.n)
        checked = {}

        def parts(k):
            self.p.steps = k
            g = self.gradient()
            xp = self.flat.set(x0 + h * v)
            fp = self.objective()
            xm = self.flat.set(x0 - h * v)
            fm = self.objective()
            self.flat.set(x0)
            ad, fdv = float(np.dot(g, xp - xm)), fp - fm
            err = abs(ad - fdv) / max(abs(fdv), 1e-300)
            checked[k] = err
            return bool(compare.mismatch(np.array([ad]), np.array([fdv]), rtol).any())

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
            self.p.steps = steps
            self.flat.set(x0)
            self.stage("probes")
        self.doc["horizon"] = {"steps": steps, "first_disagreement": hi,
                               "relative_error": {str(k): e for k, e in sorted(checked.items())}}
        self.save()

    def reference(self):
        if not self.doc["protocol"]["optional"].get("reference_gradient"):
            return
        self.stage("reference")
        ref = self.flat.flatten_gradient(self.p.reference_gradient())
        rtol = compare.rtol_for(self.flat.dtypes)
        calls = [compare.signature(g, ref, rtol) for g in self.calls]
        out = {"calls": calls, "norm": float(np.linalg.norm(ref))}
        base = getattr(self, "base_fd", None)
        if base is not None:
            out["fd_vs_reference"] = compare.signature(base["fd_coords"], ref[base["coords"]], rtol)
            idx = self._worst(ref[base["coords"]], base["fd_coords"], base["coords"], rtol, self.opt["sweep_coords"])
            if idx:
                recs = self._sweep(self.flat.get(), idx, ref, REFERENCE_SWEEP_STEPS)
                for rec in recs:
                    rec["verdict"] = compare.reference_disagreement(rec["autodiff"], rec["forward"], rec["backward"],
                                                                    rec["central"], rtol)
                out["sweep"] = recs
        self.doc["reference"] = out
        self.stage("probes")
        self.save()

    def launches_check(self):
        """Check each distinct kernel recorded by the first gradient() call in isolation."""
        if not self.opt["launch_check"] or not getattr(self, "launches", None):
            return
        import warp as wp

        self.stage("launches")
        wp.config.verify_autograd_array_access = False
        seen = {}
        for launch in self.launches:
            kernel, dim, max_blocks, inputs, outputs, device = launch[:6]
            if not isinstance(kernel, wp.Kernel):
                continue
            key = kernel.key
            if key in seen:
                seen[key]["launches"] += 1
                continue
            rec = {"kernel": key, "launches": 1, "ok": None, "skipped": None}
            seen[key] = rec
            self.doc["running"] = f"launches:{key}"
            self.save()
            if len(seen) > self.opt["max_launch_kernels"]:
                rec["skipped"] = "over the kernel limit of this probe"
                continue
            rec["worst"] = None
            opts = dict(getattr(kernel.module, "options", {}) or {})
            opts.update(getattr(kernel, "options", {}) or {})
            if not opts.get("enable_backward", True):
                rec["skipped"] = "compiled with enable_backward=False (no adjoint)"
                continue
            args = list(inputs) + list(outputs)
            if not outputs:
                split = _written_suffix(kernel, len(args))
                if split is None:
                    rec["skipped"] = "outputs passed as inputs and not the trailing arguments"
                    continue
                inputs, outputs = args[:split], args[split:]
            if any(hasattr(a, "cls") and not isinstance(a, wp.array) for a in args):
                rec["skipped"] = "struct arguments are not supported by the per-launch check"
                continue
            floats = [a for a in args if isinstance(a, wp.array) and a.requires_grad]
            if not floats:
                rec["skipped"] = "no argument with requires_grad"
                continue
            size = sum(a.size * max(1, getattr(a.dtype, "_length_", 1)) for a in floats)
            if size > self.opt["max_launch_scalars"]:
                rec["skipped"] = f"{size} differentiable scalars, over the probe's limit of {self.opt['max_launch_scalars']}"
                continue
            dt = np.float64 if all("float64" in str(a.numpy().dtype) for a in floats) else np.float32
            mag = max(1.0, max(float(np.sqrt(np.mean(np.asarray(a.numpy(), dtype=np.float64) ** 2))) for a in floats))
            try:
                from warp.autograd import jacobian, jacobian_fd

                kw = {"dim": dim, "inputs": list(inputs), "outputs": list(outputs), "device": device,
                      "max_blocks": max_blocks}
                jad = jacobian(kernel, **kw)
                jfd = jacobian_fd(kernel, eps=step_size(dt) * mag, **kw)
            except Exception as exc:  # noqa: BLE001 - some launches cannot be replayed alone
                rec["skipped"] = f"Jacobian failed: {type(exc).__name__}: {str(exc)[:160]}"
                continue
            names = [a.label for a in kernel.adj.args]
            worst = None
            for key, j_ad in jad.items():
                if key not in jfd:
                    continue
                a_np = j_ad.numpy().astype(np.float64)
                f_np = jfd[key].numpy().astype(np.float64)
                sig = compare.signature(a_np, f_np, compare.RTOL[dt.__name__])
                if sig["signature"] != "agrees" and (worst is None or sig["relative_error"] > worst["relative_error"]):
                    worst = {"input": names[key[0]] if key[0] < len(names) else key[0],
                             "output": names[len(inputs) + key[1]] if len(inputs) + key[1] < len(names) else key[1],
                             "signature": sig["signature"], "relative_error": sig["relative_error"]}
            rec["ok"] = worst is None
            rec["worst"] = worst
        self.doc["launches"] = {"kernels": list(seen.values()), "recorded": len(self.launches)}
        self.stage("probes")
        self.save()

    def nan_scan(self):
        det = self.doc.get("determinism", {})
        obj = det.get("objective", [])
        grads_bad = {}
        for g_idx, g in enumerate(getattr(self, "calls", [])):
            for i, k in enumerate(self.flat.names):
                a, b = self.flat.offsets[i], self.flat.offsets[i + 1]
                nb = int(np.sum(~np.isfinite(g[a:b])))
                if nb:
                    grads_bad.setdefault(k, []).append({"call": g_idx + 1, "count": nb, "of": b - a})
        self.doc["nan_scan"] = {
            "objective_finite": bool(obj) and all(isinstance(v, float) for v in obj),
            "gradient_nonfinite": grads_bad,
        }
        self.save()

    def tracker(self):
        warnings_found = {}
        by_stage = {}
        for stage, text in self.cap.chunks:
            by_stage[stage] = by_stage.get(stage, "") + text
        for stage, text in by_stage.items():
            taken = []
            for kind, pat in TRACKER_PATTERNS:
                for m in pat.finditer(text):
                    if any(a <= m.start() < b for a, b in taken):
                        continue
                    taken.append((m.start(), m.end()))
                    g = m.groupdict()
                    key = (g.get("arg") or g.get("op") or "", g.get("kernel") or "", kind)
                    w = warnings_found.setdefault(
                        key,
                        {"kind": kind, "arg": g.get("arg"), "kernel": g.get("kernel"), "operation": g.get("op"),
                         "sites": [], "stages": [], "count": 0},
                    )
                    w["count"] += 1
                    site = f"{os.path.basename(g['file'])}:{g['line']}" if g.get("file") else None
                    if site and site not in w["sites"]:
                        w["sites"].append(site)
                    if stage not in w["stages"]:
                        w["stages"].append(stage)
        self.doc["tracker"] = {"enabled": bool(self.opt["tracker"]), "warnings": list(warnings_found.values())}
        self.save()

    def device_start(self):
        """On a CUDA device, start timing the probes with CUDA events and note
        the memory pool's high-water mark (absent on CPU, not zero)."""
        if not str(self.doc.get("device", "")).startswith("cuda"):
            return
        try:
            import warp as wp

            self._ev0 = wp.Event(self.doc["device"], enable_timing=True)
            wp.record_event(self._ev0)
        except Exception as exc:  # noqa: BLE001 - cost figures must never break a measurement
            self.doc["cost"]["device_note"] = f"CUDA timing unavailable: {type(exc).__name__}: {exc}"

    def device_stop(self):
        """Device seconds between the CUDA events and the pool's peak bytes in use."""
        if getattr(self, "_ev0", None) is None:
            return
        try:
            import warp as wp

            ev1 = wp.Event(self.doc["device"], enable_timing=True)
            wp.record_event(ev1)
            self.doc["cost"]["device_s"] = wp.get_event_elapsed_time(self._ev0, ev1) / 1000.0
            self.doc["cost"]["device_peak_bytes"] = int(wp.get_mempool_used_mem_high(self.doc["device"]))
        except Exception as exc:  # noqa: BLE001
            self.doc["cost"]["device_note"] = f"CUDA cost unavailable: {type(exc).__name__}: {exc}"

    def compiles(self):
        """Kernel compilations and their seconds, from Warp's module-load messages."""
        comp = [m.groupdict() for m in COMPILE_PATTERN.finditer(self.cap.text())]
        self.doc["cost"]["compiles"] = sum(1 for c in comp if c["how"] == "compiled")
        self.doc["cost"]["compile_s"] = sum(float(c["ms"]) for c in comp if c["how"] == "compiled") / 1000.0
        self.save()


def run(path: str, device: str, scale: str, out: str, options: dict | None = None) -> dict:
    """Measure the variant at ``path``; write and return the result document."""
    opt = dict(DEFAULTS)
    opt.update(options or {})
    t0 = time.perf_counter()
    doc = {"device": device, "scale": scale, "options": opt, "errors": [], "cost": {}}
    cap = _Capture()
    meas = None
    with contextlib.redirect_stdout(cap), contextlib.redirect_stderr(cap), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda msg, cat, fn, ln, file=None, line=None: cap.write(f"{cat.__name__}: {msg}\n")
        try:
            import warp as wp

            doc["warp_version"] = wp.config.version
            _atomic_write(out, doc)
            wp.config.verify_autograd_array_access = bool(opt["tracker"])
            wp.init()
            from ..problem import check_problem, import_variant

            module = import_variant(path)
            problem = module.make_problem(device, scale)
            doc["protocol"] = check_problem(problem)
            doc["cost"]["load_s"] = time.perf_counter() - t0
            meas = Measurement(problem, out, opt, cap, doc)
            meas.save()
        except BaseException as exc:  # noqa: BLE001 - recorded, then the worker exits non-zero
            doc["errors"].append({"probe": "load", "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc(limit=8)})
        if meas is not None:
            meas.device_start()
            for probe in (meas.determinism, meas.fd, meas.reference, meas.nan_scan, meas.tracker, meas.horizon,
                          meas.launches_check):
                try:
                    probe()
                except (Exception, SystemExit) as exc:  # noqa: BLE001 - a program calling sys.exit is recorded too
                    doc["errors"].append({"probe": probe.__name__, "error": f"{type(exc).__name__}: {exc}",
                                          "traceback": traceback.format_exc(limit=8)})
                    if probe == meas.determinism:
                        break
            doc["running"] = None
            meas.device_stop()
            meas.compiles()
    doc["cost"]["wall_s"] = time.perf_counter() - t0
    if meas is not None:
        doc["cost"].update({"objective_evals": meas.n_obj, "gradient_evals": meas.n_grad})
    doc["log_tail"] = cap.text()[-4000:]
    _atomic_write(out, doc)
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--scale", default="small", choices=["small", "production"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--options", default="{}", help="JSON object overriding DEFAULTS")
    a = ap.parse_args(argv)
    doc = run(a.path, a.device, a.scale, a.out, json.loads(a.options))
    return 3 if any(e["probe"] in ("load", "determinism") for e in doc["errors"]) else 0


if __name__ == "__main__":
    sys.exit(main())
