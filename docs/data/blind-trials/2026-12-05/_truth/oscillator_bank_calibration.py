"""Truth for oscillator_bank_calibration: twin of the printed loss (tracking misfit of the rollout)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "oscillator_bank_calibration", "train.py")
N, STEPS, DT = 5, 40, 0.05
DRIVE = [float(np.float32(np.sin(1.7 * t * DT))) for t in range(STEPS)]


def sim(k, c):
    x, v, out = np.zeros(N), np.zeros(N), []
    for t in range(STEPS):
        v = v + DT * (DRIVE[t] - k * x - c * v)
        x = x + DT * v
        out.append(x.copy())
    return out


MEAS = [m.astype(np.float32).astype(np.float64) for m in sim(np.array([2.0, 3.5, 5.0, 1.2, 4.2]),
                                                              np.array([0.3, 0.6, 0.2, 0.5, 0.9]))]


def f(params):
    xs = sim(params[0], params[1])
    return sum(np.sum((a - b) ** 2) for a, b in zip(xs, MEAS)) / (STEPS * N)


if __name__ == "__main__":
    common.install(optim=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 2, 9, len(ev) - 1)]
    common.compare("oscillator_bank_calibration", its, f, note=f"{len(ev)} Adam steps recorded")
