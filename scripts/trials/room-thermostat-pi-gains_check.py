"""Float64 central-difference check of the gradient consumed by the hand-written update kernel."""
import sys

sys.dont_write_bytecode = True  # keep the variant folders free of __pycache__

import importlib.util
import os

import numpy as np
import warp as wp

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "corpus", "room-thermostat-pi-gains")
ITERS = 4


def load(variant):
    spec = importlib.util.spec_from_file_location(f"thermostat_{variant}", os.path.join(HERE, variant, "train.py"))
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
    mod = load(variant)
    mod.main(["--iters", str(ITERS)])
    temp0, setpoint = mod.make_rooms(16)
    for it, (p, g) in enumerate(records):
        ref = fd_grad(lambda q: np_loss(q, temp0, setpoint), p)
        print(f"{variant} iter {it + 1}: rel_err = {rel_err(g, ref):.3e}  g={g} fd={ref}")
