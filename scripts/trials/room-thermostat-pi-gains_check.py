"""Float64 central-difference check of the gradient consumed by the hand-written update kernel."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import numpy as np
import warp as wp

from fd_trial import case_folder, fd_grad, load_variant, rel_err

HERE = case_folder("room-thermostat-pi-gains")
ITERS = 4


def np_loss(gains, temp0, setpoint, horizon=25, dt=0.1, ambient=10.0, leak=0.3, heater=1.5, umax=8.0):
    temp = temp0.copy()
    integ = np.zeros_like(temp)
    cost = 0.0
    for _ in range(horizon):
        e = setpoint - temp
        integ = integ + e * dt
        u = umax * np.tanh((gains[0] * e + gains[1] * integ) / umax)
        temp = temp + dt * (-leak * (temp - ambient) + heater * u)
        cost += np.sum(e * e)
    return cost / (temp0.size * horizon)


records = []
_orig_launch = wp.launch


def recording_launch(kernel, *args, **kwargs):
    if getattr(kernel, "key", "").endswith("gradient_step") and not kwargs.get("adjoint", False):
        params, grad = kwargs["inputs"][0], kwargs["inputs"][1]
        records.append((params.numpy().astype(np.float64).copy(), grad.numpy().astype(np.float64).copy()))
    return _orig_launch(kernel, *args, **kwargs)


wp.launch = recording_launch

for variant in ("buggy", "fixed"):
    records.clear()
    mod = load_variant(HERE, variant, "thermostat")
    mod.main(["--iters", str(ITERS)])
    temp0, setpoint = mod.make_rooms(16)
    for it, (p, g) in enumerate(records):
        ref = fd_grad(lambda q: np_loss(q, temp0, setpoint), p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  g={g} fd={ref}")
