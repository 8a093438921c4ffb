"""Float64 central-difference check of the gradient consumed by the SGD step (objective: mean squared residual)."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import importlib.util
import os

import numpy as np
import warp as wp
import warp.optim

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "corpus", "polynomial-coefficient-regression")
ITERS = 2


def load(variant):
    spec = importlib.util.spec_from_file_location(f"polyfit_{variant}", os.path.join(HERE, variant, "train.py"))
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


def np_loss(c, x, y):
    p = np.polynomial.polynomial.polyval(x, c)
    return float(np.mean((p - y) ** 2))


records = []
_orig_step = wp.optim.SGD.step


def recording_step(self, grad):
    records.append((self.params[0].numpy().astype(np.float64).copy(), grad[0].numpy().astype(np.float64).copy()))
    return _orig_step(self, grad)


wp.optim.SGD.step = recording_step

for variant in ("buggy", "fixed"):
    records.clear()
    mod = load(variant)
    mod.main(["--iters", str(ITERS)])
    x, y = mod.make_samples(64)
    for it, (p, g) in enumerate(records):
        ref = fd_grad(lambda q: np_loss(q, x, y), p)
        ratio = np.linalg.norm(g) / np.linalg.norm(ref)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  |g|/|fd| = {ratio:.3f}")
