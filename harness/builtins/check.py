"""Measuring the builtins suite's overload specs (runs in the per-release interpreter).

The inputs of each spec's kernel (:func:`sample_arg`), one spec's kernel
launched and compared with central finite differences (:class:`Case`,
:func:`compare`) and a batch of specs (:func:`measure`). The specs and their
kernels come from :mod:`defects4warp.builtins.suite`; like it, this module
imports only NumPy, Warp and the standard library.
"""

from __future__ import annotations

import hashlib
import tempfile
import time
import traceback

import numpy as np

from .suite import (ACCESS, ACCESS_ARRAY, ACCESS_RET, ARG_DOMAINS, CONSTANTS, DOMAINS, NEAR_IDENTITY, TILE_N, _wp,
                    load_module, module_source, parse_type, size_of, tile_values, type_expr)


# ---------------------------------------------------------------- inputs


def _unit_quats(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return q


def sample_arg(rng, builtin: str, index: int, s: str, points: int) -> np.ndarray:
    """Values (points, size_of(s)) of argument ``index`` of ``builtin`` inside its domain (see :data:`DOMAINS`)."""
    k, sh, _ = parse_type(s)
    n = size_of(s)
    dom = ARG_DOMAINS.get((builtin, index)) or DOMAINS.get(builtin)
    if dom is not None and k in ("scalar", "vec"):
        return rng.uniform(dom[0], dom[1], size=(points, n))
    if k == "quat":
        return _unit_quats(rng, points)
    if k == "transform":
        p = rng.uniform(0.5, 1.5, size=(points, 3)) * rng.choice([-1.0, 1.0], size=(points, 3))
        return np.concatenate([p, _unit_quats(rng, points)], axis=1)
    if k == "mat" and sh[0] == sh[1] and builtin in NEAR_IDENTITY:
        m = np.eye(sh[0])[None] + 0.3 * rng.uniform(-1, 1, size=(points,) + sh)
        return m.reshape(points, n)
    if dom is not None:
        return rng.uniform(dom[0], dom[1], size=(points, n))
    return rng.uniform(0.5, 1.5, size=(points, n)) * rng.choice([-1.0, 1.0], size=(points, n))


# ---------------------------------------------------------------- measurement


class Case:
    """One overload's kernel with its inputs; ``forward`` and ``adjoint`` evaluate it."""

    def __init__(self, spec, kernel, rng, points, device):
        self.spec, self.kernel, self.device = spec, kernel, device
        tpl = spec["template"]
        self.tiled = tpl.startswith("tile:")
        # a tile element write launches one block of TILE_N threads: one point per tile element
        self.tile_write = tpl.startswith("tile_write:")
        self.points = 1 if self.tiled else TILE_N if self.tile_write else points
        # trailing shape of the input array of a multi-dimensional access pattern (ACCESS_ARRAY)
        self.trailing = ACCESS_ARRAY.get(tpl)
        self.np_dt = np.float32 if spec["dtype"] == "float32" else np.float64
        self.args = []  # (index, type_str, values[points, n])
        for a, (k, s) in enumerate(spec["args"]):
            if s in CONSTANTS:
                continue
            if self.tiled:
                vals = tile_values(rng)
            elif self.trailing:
                k = int(np.prod(self.trailing))
                vals = rng.uniform(0.5, 1.5, size=(self.points, k)) * rng.choice([-1.0, 1.0], size=(self.points, k))
            else:
                vals = sample_arg(rng, spec["builtin"], a, s, self.points)
            self.args.append((a, s, vals))
        self.ret = spec["ret"]
        m = TILE_N if False else (1 if self.tiled else size_of(self.ret))
        self.W = rng.uniform(0.5, 1.5, size=(self.points, m)) * rng.choice([-1.0, 1.0], size=(self.points, m))
        self.y0 = None
        if tpl in ACCESS and not tpl.startswith("local_") and ACCESS_RET.get(tpl) != "scalar":
            self.y0 = rng.uniform(0.5, 1.5, size=(self.points, size_of(self.ret)))

    def _wp_arrays(self, vals_list, requires_grad):
        wp = _wp()
        out = []
        for (a, s, _), vals in zip(self.args, vals_list):
            if self.tiled:
                arr = wp.array(vals.reshape(-1).astype(np.float32), dtype=wp.float32, device=self.device,
                               requires_grad=requires_grad)
            else:
                T = eval(type_expr(s), {"wp": wp})
                trail = self.trailing or (() if size_of(s) == 1 else _shape(s))
                arr = wp.array(vals.astype(self.np_dt).reshape((self.points,) + tuple(trail)),
                               dtype=T, device=self.device, requires_grad=requires_grad)
            out.append(arr)
        return out

    def _y(self, requires_grad):
        wp = _wp()
        if self.tiled:
            return wp.zeros(1, dtype=wp.float32, device=self.device, requires_grad=requires_grad)
        T = eval(type_expr(self.ret), {"wp": wp})
        if self.y0 is not None:
            return wp.array(self.y0.astype(self.np_dt), dtype=T, device=self.device, requires_grad=requires_grad)
        return wp.zeros(self.points, dtype=T, device=self.device, requires_grad=requires_grad)

    def _launch(self, ins, y):
        wp = _wp()
        if self.tiled or self.tile_write:
            wp.launch_tiled(self.kernel, dim=[1], inputs=ins + [y], block_dim=TILE_N, device=self.device)
        else:
            wp.launch(self.kernel, dim=self.points, inputs=ins + [y], device=self.device)

    def losses(self, vals_list) -> np.ndarray:
        """Per-point loss sum_j W[i, j] * y[i, j] (float64), shape (points,), and sum |W y| per point."""
        ins = self._wp_arrays(vals_list, False)
        y = self._y(False)
        self._launch(ins, y)
        Y = y.numpy().astype(np.float64).reshape(self.points, -1)
        return (self.W * Y).sum(axis=1), np.abs(self.W * Y).sum(axis=1)

    def adjoint(self):
        wp = _wp()
        ins = self._wp_arrays([v for (_, _, v) in self.args], True)
        y = self._y(True)
        tape = wp.Tape()
        with tape:
            self._launch(ins, y)
        if self.tiled:
            seed = wp.array(self.W.reshape(-1).astype(np.float32), dtype=wp.float32, device=self.device)
        else:
            T = eval(type_expr(self.ret), {"wp": wp})
            seed = wp.array(self.W.astype(self.np_dt).reshape((self.points,) + (() if size_of(self.ret) == 1 else
                                                                                 _shape(self.ret))),
                            dtype=T, device=self.device)
        tape.backward(grads={y: seed})
        return [a.grad.numpy().astype(np.float64).reshape(self.points, -1) for a in ins]


def _shape(s):
    k, sh, _ = parse_type(s)
    return sh if k in ("vec", "mat") else (size_of(s),)


#: Relative tolerance of the adjoint against FD beyond the noise estimate:
#: float64 overloads 1e-6, float32 ones 1e-3 (float32 rounding of the adjoint itself is ~1e-6 relative;
#: 1e-3 leaves room for cancellation in a correct formula).
RTOL = {"float64": 1e-6, "float32": 1e-3}
#: Relative FD steps (times max(1, |x|)): (h1, h2 = h1/2). float64 1e-5 (truncation ~1e-10, rounding ~1e-11);
#: float32 1e-2 (rounding noise eps32/h ~1e-5, truncation ~1e-4 bounded by the two-step difference).
STEPS = {"float64": 1e-5, "float32": 1e-2}
EPS = {"float64": np.finfo(np.float64).eps, "float32": float(np.finfo(np.float32).eps)}


def compare(case: Case) -> dict:
    """Tape adjoint against central finite differences for one overload.

    For every float input coordinate ``c`` (perturbed at all points at once:
    points are independent threads), ``fd_h = (L(x + h e_c) - L(x - h e_c)) / 2h``
    at ``h`` and ``h/2``. The uncertainty of ``fd_{h/2}`` is
    ``|fd_h - fd_{h/2}|`` (truncation) plus ``4 eps |L|_abs / h`` (rounding
    of the forward: float32 for float32 overloads). A coordinate whose two
    steps differ by more than 10% of the larger is on or near a kink and is
    left out (``skipped``).

    Returns
    -------
    dict
        ``state`` (``agrees``, ``wrong`` or ``zero``), ``rel_err`` (max over
        coordinates of |ad - fd| / scale, scale = max |fd|), ``noise`` (the
        largest uncertainty / scale), ``coords``/``skipped`` counts and
        ``points`` (up to two of the worst: inputs, ad, fd).
    """
    dt = case.spec["dtype"]
    ads = case.adjoint()
    base = [v.copy() for (_, _, v) in case.args]
    fds, uncs, ok = [], [], []
    for ai, (a, s, v) in enumerate(case.args):
        fd = np.zeros_like(v)
        un = np.zeros_like(v)
        good = np.ones_like(v, dtype=bool)
        for c in range(v.shape[1]):
            est = []
            for h_rel in (STEPS[dt], STEPS[dt] / 2):
                h = h_rel * np.maximum(1.0, np.abs(v[:, c]))
                p = [b.copy() for b in base]
                m = [b.copy() for b in base]
                p[ai][:, c] += h
                m[ai][:, c] -= h
                lp, ap = case.losses(p)
                lm, am = case.losses(m)
                est.append(((lp - lm) / (2 * h), np.maximum(ap, am) / h))
            (f1, _), (f2, a2) = est
            fd[:, c] = f2
            un[:, c] = np.abs(f1 - f2) + 4 * EPS[dt] * a2
            good[:, c] = np.abs(f1 - f2) <= 0.1 * np.maximum(np.abs(f1), np.abs(f2)) + 8 * EPS[dt] * a2
        fds.append(fd)
        uncs.append(un)
        ok.append(good)
    AD = np.concatenate([g.reshape(case.points, -1) for g in ads], axis=1)
    FD = np.concatenate(fds, axis=1)
    UN = np.concatenate(uncs, axis=1)
    OK = np.concatenate(ok, axis=1)
    res = {"coords": int(OK.size), "skipped": int((~OK).sum())}
    if not OK.any():
        res.update(state="inconclusive", rel_err=None, noise=None, points=[])
        return res
    scale = float(np.max(np.abs(FD[OK])))
    tol = 4 * UN + RTOL[dt] * max(scale, 1e-30)
    with np.errstate(invalid="ignore"):
        err = np.where(OK, np.abs(AD - FD), 0.0)
        bad = OK & ~(err <= tol)  # NaN adjoints count as bad
    denom = max(scale, 1e-30)
    res["noise"] = float(np.max(np.where(OK, UN, 0.0)) / denom) if scale > 0 else 0.0
    finite_err = err[np.isfinite(err)]
    res["rel_err"] = float(np.max(finite_err) / denom) if finite_err.size and scale > 0 else (
        0.0 if scale == 0 and not bad.any() else None)
    if not bad.any():
        res["state"] = "agrees"
        res["points"] = []
        return res
    res["state"] = "zero" if np.all(AD[OK] == 0) else "wrong"
    if np.any(~np.isfinite(AD[OK])):
        res["nonfinite"] = True
    worst = np.argsort(-np.nan_to_num(np.where(bad, err, -1.0), nan=np.inf).max(axis=1))[:2]
    pts = []
    for i in worst:
        pts.append({"inputs": [np.round(v[i], 6).tolist() for (_, _, v) in case.args],
                    "ad": np.round(AD[i], 6).tolist(), "fd": np.round(FD[i], 6).tolist()})
    res["points"] = pts
    return res


def measure(specs: list, *, device: str = "cpu", points: int = 3, seed: int = 0, workdir: str | None = None,
            name: str = "d4w_builtins_batch", log=None) -> dict:
    """Compile ``specs`` as one module and measure each; returns id -> cell dict.

    A build failure of the module is bisected down to the overloads that fail
    (``build_error`` with Warp's message). Seeds: ``seed`` plus the spec's
    position in the sorted id list, so a cell does not depend on its batch.
    """
    wp = _wp()
    workdir = workdir or tempfile.mkdtemp(prefix="d4w-builtins-")
    out = {}

    def run(group, tag):
        src = module_source(group)
        try:
            mod = load_module(src, workdir, f"{name}_{tag}")
            # the first launch builds the whole module (a codegen or compile error of any kernel fails it)
            Case(group[0], getattr(mod, "k0"), np.random.default_rng(0), points, device).losses(
                [v for (_, _, v) in Case(group[0], getattr(mod, "k0"), np.random.default_rng(0), points,
                                         device).args])
        except Exception as exc:
            msg = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]
            if len(group) == 1:
                out[group[0]["id"]] = {"state": "build_error", "message": msg}
                return
            h = len(group) // 2
            run(group[:h], tag + "a")
            run(group[h:], tag + "b")
            return
        for j, spec in enumerate(group):
            t0 = time.time()
            try:
                rng = np.random.default_rng([seed, _stable_hash(spec["id"])])
                case = Case(spec, getattr(mod, f"k{j}"), rng, points, device)
                cell = compare(case)
            except Exception as exc:
                msg = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]
                cell = {"state": "build_error", "message": msg}
                if log:
                    log(traceback.format_exc())
            cell["seconds"] = round(time.time() - t0, 3)
            out[spec["id"]] = cell

    run(specs, "m")
    return out


def _stable_hash(s: str) -> int:
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)
