"""Float64 central-difference check of the gradient consumed by the descend kernel."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("trapped-particle-repulsion-layout")
ITERS = 2


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
    mod = load_variant(HERE, variant, "repulsion")
    mod.main(["--iters", str(ITERS)])
    for it, (p, g) in enumerate(records):
        ref = fd_grad(np_energy, p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  nan_entries={int(np.isnan(g).sum())}/{g.size}")
