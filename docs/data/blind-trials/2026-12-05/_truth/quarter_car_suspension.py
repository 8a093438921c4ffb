"""Truth for quarter_car_suspension: twin of the printed loss (acceleration^2 + travel penalty)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "quarter_car_suspension", "train.py")
CARS, STEPS, DT, TW = 4, 60, 0.01, 400.0
MASS = np.array([1.0, 1.3, 0.8, 1.1], dtype=np.float32).astype(np.float64)


def bump(t):
    s = t * DT
    if 0.1 < s < 0.3:
        h = 0.05 * np.sin(np.pi * (s - 0.1) / 0.2) ** 2
        rate = 0.05 * np.pi / 0.2 * np.sin(2.0 * np.pi * (s - 0.1) / 0.2)
        return float(np.float32(h)), float(np.float32(rate))
    return 0.0, 0.0


def f(params):
    k, c = params
    z, v, loss = np.zeros(CARS), np.zeros(CARS), 0.0
    for t in range(STEPS):
        r, rr = bump(t)
        a = (-k * (z - r) - c * (v - rr)) / MASS
        v = v + DT * a
        z = z + DT * v
        r1, _ = bump(t + 1)
        loss += np.sum(a * a + TW * (z - r1) ** 2) / (STEPS * CARS)
    return loss


if __name__ == "__main__":
    common.install(optim=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("quarter_car_suspension", its, f, note=f"{len(ev)} Adam steps recorded; params [k, c]")
