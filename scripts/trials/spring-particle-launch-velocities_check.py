"""Float64 central-difference check of the gradient consumed by the optimizer step."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import importlib.util
import os

import numpy as np
import warp as wp
import warp.optim

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "corpus", "spring-particle-launch-velocities")
ITERS = 3


def load(variant):
    spec = importlib.util.spec_from_file_location(f"spring_rollout_{variant}", os.path.join(HERE, variant, "train.py"))
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


def np_loss(v0, x0, target, steps=20, dt=0.05, k=4.0, c=0.3):
    x = x0.copy()
    v = v0.reshape(-1, 2).copy()
    for _ in range(steps):
        f = -k * x - c * (v * v).sum(1, keepdims=True) * v
        v = v + f * dt
        x = x + v * dt
    return float(((x - target) ** 2).sum())


records = []
_orig_step = wp.optim.SGD.step


def recording_step(self, grad):
    records.append(([p.numpy().astype(np.float64).ravel() for p in self.params],
                    [g.numpy().astype(np.float64).ravel() for g in grad]))
    return _orig_step(self, grad)


wp.optim.SGD.step = recording_step

for variant in ("buggy", "fixed"):
    records.clear()
    mod = load(variant)
    mod.main(["--iters", str(ITERS)])
    x0, target, _ = mod.make_data(8, 0)
    for it, (params, grads) in enumerate(records):
        p, g = params[0], grads[0]
        ref = fd_grad(lambda q: np_loss(q, x0, target), p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  |g|={np.linalg.norm(g):.4e} |fd|={np.linalg.norm(ref):.4e}")
