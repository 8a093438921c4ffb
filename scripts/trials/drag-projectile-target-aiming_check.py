"""Float64 central-difference check of the gradient consumed by the Adam step."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp
import warp.optim

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("drag-projectile-target-aiming")
ITERS = 3


def np_loss(flat, start, targets, steps=30, dt=0.03, drag=0.05):
    grav = np.array([0.0, -9.81, 0.0])
    pos = start.copy()
    v = flat.reshape(-1, 3).copy()
    for _ in range(steps):
        speed = np.linalg.norm(v, axis=1, keepdims=True)
        v = v + (grav - drag * speed * v) * dt
        pos = pos + v * dt
    return float(np.mean(((pos - targets) ** 2).sum(1)))


records = []
_orig_step = wp.optim.Adam.step


def recording_step(self, grad):
    records.append((self.params[0].numpy().astype(np.float64).ravel().copy(),
                    grad[0].numpy().astype(np.float64).ravel().copy()))
    return _orig_step(self, grad)


wp.optim.Adam.step = recording_step

for variant in ("buggy", "fixed"):
    records.clear()
    mod = load_variant(HERE, variant, "projectile")
    mod.main(["--iters", str(ITERS)])
    start, targets, _ = mod.make_volley(6)
    for it, (p, g) in enumerate(records):
        ref = fd_grad(lambda q: np_loss(q, start, targets), p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  |g|={np.linalg.norm(g):.4e} |fd|={np.linalg.norm(ref):.4e}")
