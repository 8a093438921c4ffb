"""Float64 central-difference check of the gradient consumed by update_velocity.

The reference is taken at the params the forward pass (and the printed loss) used in that iteration.
"""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("decaying-oscillation-curve-fit")
ITERS = 5


def np_loss(p, t, y):
    pred = p[0] * np.exp(-p[1] * t) * np.sin(p[2] * t + p[3])
    return float(np.mean((pred - y) ** 2))


forward_params, consumed, params_at_update, param_ref = [], [], [], []
_orig_launch = wp.launch


def recording_launch(kernel, *args, **kwargs):
    key = getattr(kernel, "key", "")
    if not kwargs.get("adjoint", False):
        if key.endswith("predict"):
            param_ref[:] = [kwargs["inputs"][0]]
            forward_params.append(kwargs["inputs"][0].numpy().astype(np.float64).copy())
        elif key.endswith("update_velocity"):
            consumed.append(kwargs["inputs"][1].numpy().astype(np.float64).copy())
            params_at_update.append(param_ref[0].numpy().astype(np.float64).copy())
    return _orig_launch(kernel, *args, **kwargs)


wp.launch = recording_launch

for variant in ("buggy", "fixed"):
    forward_params.clear()
    consumed.clear()
    params_at_update.clear()
    mod = load_variant(HERE, variant, "damped_wave")
    mod.main(["--iters", str(ITERS)])
    t, y = mod.make_measurements()
    for it, (p, g, pu) in enumerate(zip(forward_params, consumed, params_at_update)):
        ref = fd_grad(lambda q: np_loss(q, t, y), p)
        ref_u = fd_grad(lambda q: np_loss(q, t, y), pu)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}"
              f"  (vs FD at the params held when the update runs: {rel_err(g, ref_u):.3e})")
