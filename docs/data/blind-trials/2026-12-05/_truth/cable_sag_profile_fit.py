"""Truth for cable_sag_profile_fit: twin of the printed total (range misfit + cable potential energy)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "cable_sag_profile_fit", "train.py")
NODES, SPAN, TENSION, WEIGHT = 16, 30.0, 1.0, 0.05
dx = SPAN / (NODES - 1)
s = np.array([0.7, 4.1, 9.5, 15.2, 21.8, 26.0, 29.3])
node = np.minimum((s / dx).astype(np.int32), NODES - 2)
frac = ((s - node * dx) / dx).astype(np.float32).astype(np.float64)
truth = -2.5 * np.sin(np.pi * s / SPAN) ** 1.2
readings = (truth + np.array([0.03, -0.02, 0.01, 0.0, -0.04, 0.02, 0.01])).astype(np.float32).astype(np.float64)


def f(params):
    y = params[0]
    h = (1.0 - frac) * y[node] + frac * y[node + 1]
    data = np.sum((h - readings) ** 2)
    slope = np.diff(y) / dx
    energy = WEIGHT * dx * np.sum(y) + 0.5 * TENSION * dx * np.sum(slope ** 2)
    return data + energy


if __name__ == "__main__":
    common.install(update_kernels={"descend": (0, [1, 2])})
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 2, 3, 7, 9, len(ev) - 1)]
    common.compare("cable_sag_profile_fit", its, f, note=f"{len(ev)} updates recorded (descend reads y.grad + the energy gradient)")
