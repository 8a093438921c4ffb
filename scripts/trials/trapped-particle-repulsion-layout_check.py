"""Float64 central-difference check of the gradient consumed by the descend kernel."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import importlib.util
import os

import numpy as np
import warp as wp

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "corpus", "trapped-particle-repulsion-layout")
ITERS = 2


def load(variant):
    spec = importlib.util.spec_from_file_location(f"repulsion_{variant}", os.path.join(HERE, variant, "train.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fd_grad(f, p, h=1e-6):
    g = np.zeros_like(p)
    for k in range(p.size):
        e = np.zeros_like(p)
        e.flat[k] = h
        g.flat[k] = (f(p + e) - f(p - e)) / (2 * h)
    return g


def rel_err(g, ref):
    return float(np.linalg.norm(g - ref) / max(np.linalg.norm(ref), 1e-30))


def np_energy(flat, sigma=0.5, strength=1.0, k=1.0):
    x = flat.reshape(-1, 2)
    r = x[:, None, :] - x[None, :, :]
    d = np.sqrt((r ** 2).sum(-1))
    off = ~np.eye(x.shape[0], dtype=bool)
    return float(0.5 * strength * np.exp(-d[off] / sigma).sum() + 0.5 * k * (x ** 2).sum())


records = []
_orig_launch = wp.launch


def recording_launch(kernel, *args, **kwargs):
    if getattr(kernel, "key", "").endswith("descend") and not kwargs.get("adjoint", False):
        x, g = kwargs["inputs"][0], kwargs["inputs"][1]
        records.append((x.numpy().astype(np.float64).ravel().copy(), g.numpy().astype(np.float64).ravel().copy()))
    return _orig_launch(kernel, *args, **kwargs)


wp.launch = recording_launch

for variant in ("buggy", "fixed"):
    records.clear()
    mod = load(variant)
    mod.main(["--iters", str(ITERS)])
    for it, (p, g) in enumerate(records):
        ref = fd_grad(np_energy, p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  nan_entries={int(np.isnan(g).sum())}/{g.size}")
