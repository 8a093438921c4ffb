"""Float64 central-difference check of the gradient consumed by the optimizer step."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp
import warp.optim

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("spring-particle-launch-velocities")
ITERS = 3


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
    mod = load_variant(HERE, variant, "spring_rollout")
    mod.main(["--iters", str(ITERS)])
    x0, target, _ = mod.make_data(8, 0)
    for it, (params, grads) in enumerate(records):
        p, g = params[0], grads[0]
        ref = fd_grad(lambda q: np_loss(q, x0, target), p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  |g|={np.linalg.norm(g):.4e} |fd|={np.linalg.norm(ref):.4e}")
