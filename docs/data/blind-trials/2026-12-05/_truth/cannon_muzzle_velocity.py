"""Truth for cannon_muzzle_velocity: twin of the printed loss (mean squared miss distance); the param
of iteration k is the buffer the update reads (the two buffers swap at every update)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "cannon_muzzle_velocity", "train.py")
SHELLS, STEPS, DT, DRAG = 6, 40, 0.04, 0.15
TARGET = np.array([[20.0, 0.0], [25.0, 1.0], [30.0, -0.5], [18.0, 2.0], [35.0, 0.0], [28.0, 3.0]])
GV = np.array([0.0, float(np.float32(-9.81))])


def f(params):
    v = params[0].reshape(SHELLS, 2).copy()
    x = np.zeros((SHELLS, 2))
    for _ in range(STEPS):
        v = v + DT * (GV - DRAG * v)
        x = x + DT * v
    return np.sum((x - TARGET) ** 2) / SHELLS


if __name__ == "__main__":
    common.install(update_kernels={"aim_update": (0, [1])})
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 2, 9, len(ev) - 1)]
    common.compare("cannon_muzzle_velocity", its, f, note=f"{len(ev)} updates recorded (aim_update)")
