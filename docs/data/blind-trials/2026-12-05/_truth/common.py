"""Ground-truth helper for the 2026-12-05 blind trials (never run by the tool).

Runs a training script unmodified (runpy, as ``__main__``) with three of Warp's public calls wrapped
only to *record*: ``wp.launch`` (an update kernel named by the truth file), ``warp.optim.Adam.step`` /
``warp.optim.SGD.step`` and ``wp.array.assign``. Each record holds float64 copies of the params just
before the update and of the gradient buffers the update reads (summed when it reads several), so
the gradient compared is the one the update consumes. Nothing the script computes is changed.

The truth gradient is float64 central differences of a NumPy twin of the script's objective,
step h_i = 1e-6 * max(|p_i|, 1) (relative ~1e-6), or a twin's analytic gradient (surrogates).
rel_err = ||g - g_true|| / ||g_true|| over all param elements of that iteration.
"""
import os
import runpy
import sys

import numpy as np
import warp as wp
import warp.optim

EVENTS = []


def _np(a):
    return np.array(a.numpy(), dtype=np.float64, copy=True)


def install(update_kernels=None, optim=False, assign=False):
    """update_kernels: {kernel_key: (param_index, [grad_indices])}, indices into inputs+outputs."""
    update_kernels = update_kernels or {}
    orig_launch = wp.launch

    def launch(kernel, dim, inputs=None, outputs=None, *args, **kw):
        key = getattr(kernel, "key", None)
        if key in update_kernels:
            args_all = list(inputs or []) + list(outputs or [])
            pi, gis = update_kernels[key]
            g = sum(_np(args_all[j]) for j in gis)
            EVENTS.append({"kind": "kernel", "key": key, "params": [_np(args_all[pi])], "grad": [g]})
        return orig_launch(kernel, dim, inputs if inputs is not None else [], outputs if outputs is not None else [], *args, **kw)

    wp.launch = launch
    if optim:
        for cls in (warp.optim.Adam, warp.optim.SGD):
            orig = cls.step

            def step(self, grad, _orig=orig, _name=cls.__name__):
                EVENTS.append({"kind": _name, "params": [_np(p) for p in self.params],
                               "grad": [_np(g) for g in grad]})
                return _orig(self, grad)

            cls.step = step
    if assign:
        orig_assign = wp.array.assign

        def assign_(self, src):
            if self.requires_grad and self.grad is not None:
                EVENTS.append({"kind": "assign", "ptr": self.ptr, "params": [_np(self)], "grad": [_np(self.grad)]})
            return orig_assign(self, src)

        wp.array.assign = assign_


def run_script(path):
    here = os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    old_argv = sys.argv
    sys.argv = [path]
    try:
        runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = old_argv
        os.chdir(here)


def fd_gradient(f, params, rel=1e-6):
    """Central differences of f(list of float64 arrays) -> float, flattened per param."""
    out = []
    for k, p in enumerate(params):
        g = np.zeros(p.size)
        flat = p.reshape(-1)
        for i in range(p.size):
            h = rel * max(abs(flat[i]), 1.0)
            pp = [q.copy() for q in params]
            pm = [q.copy() for q in params]
            pp[k].reshape(-1)[i] += h
            pm[k].reshape(-1)[i] -= h
            g[i] = (f(pp) - f(pm)) / (2.0 * h)
        out.append(g)
    return out


def compare(name, iterations, f, grad_true=None, note=""):
    """iterations: list of (label, params list, consumed grad list). Writes lines, returns them."""
    lines = [f"# {name}  warp {wp.config.version}  numpy {np.__version__}"]
    if note:
        lines.append(f"# {note}")
    for label, params, grad in iterations:
        params = [np.asarray(p, dtype=np.float64) for p in params]
        gt = grad_true(params) if grad_true else fd_gradient(f, params)
        gt = np.concatenate([np.ravel(x) for x in gt])
        g = np.concatenate([np.ravel(x) for x in grad])
        denom = np.linalg.norm(gt)
        err = np.linalg.norm(g - gt) / denom if denom > 0 else float(np.linalg.norm(g - gt))
        ratio = ""
        nz = np.abs(gt) > 1e-12 * max(denom, 1e-300)
        if nz.any() and np.all(np.isfinite(g)):
            r = g[nz] / gt[nz]
            ratio = f" ratio g/g_true min {r.min():.4g} max {r.max():.4g}"
        lines.append(f"iteration {label}: objective {f(params):.10g}  |g_true| {denom:.6g}  |g| {np.linalg.norm(g):.6g}"
                     f"  rel_err {err:.3e}  nan_in_g {int(np.isnan(g).sum())}{ratio}")
        if len(grad) > 1:
            per, off = [], 0
            for x in grad:
                n = np.size(x)
                a, b = g[off:off + n], gt[off:off + n]
                per.append(f"{np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300):.3e}")
                off += n
            lines.append(f"    rel_err per param: {', '.join(per)}")
        lines.append(f"    g_true[:6] {np.array2string(gt[:6], precision=6)}")
        lines.append(f"    g     [:6] {np.array2string(g[:6], precision=6)}")
    text = "\n".join(lines)
    print(text)
    return text
