"""Float64 central-difference check of the gradient consumed by the SGD step (objective: mean squared residual)."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp
import warp.optim

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("polynomial-coefficient-regression")
ITERS = 2


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
    mod = load_variant(HERE, variant, "polyfit")
    mod.main(["--iters", str(ITERS)])
    x, y = mod.make_samples(64)
    for it, (p, g) in enumerate(records):
        ref = fd_grad(lambda q: np_loss(q, x, y), p)
        ratio = np.linalg.norm(g) / np.linalg.norm(ref)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  |g|/|fd| = {ratio:.3f}")
