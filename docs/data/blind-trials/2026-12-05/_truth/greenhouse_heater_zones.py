"""Truth for greenhouse_heater_zones (staircase forward): twin of the printed loss; float64 central
differences with h = 1e-6 relative, far below the distance to the next duty step (0.01 or more at every
recorded point), so the truth for the duty is exactly 0 and for the power the smooth derivative."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "greenhouse_heater_zones", "train.py")
Z, STEPS, DT, LC, CAP, SET = 5, 48, 0.25, 0.3, 2.0, 21.0
START = np.array([18.0, 19.5, 17.0, 20.0, 18.5])
OUT = [float(np.float32(8.0 - 4.0 * np.sin(np.pi * t / STEPS))) for t in range(STEPS)]


def f(params):
    power, duty = params
    delivered = power * np.floor(duty * 10.0) / 10.0
    temp, loss = START.copy(), 0.0
    for t in range(STEPS):
        temp = temp + DT * (delivered - LC * (temp - OUT[t])) / CAP
        loss += np.sum((temp - SET) ** 2) / (STEPS * Z)
    return loss


if __name__ == "__main__":
    common.install(update_kernels={"descend": (0, [1])})
    common.run_script(SCRIPT)
    ev = common.EVENTS
    pairs = [(ev[2 * k], ev[2 * k + 1]) for k in range(len(ev) // 2)]
    its = [(k + 1, [pairs[k][0]["params"][0], pairs[k][1]["params"][0]],
            [pairs[k][0]["grad"][0], pairs[k][1]["grad"][0]]) for k in (0, 1, 9, len(pairs) - 1)]
    d = pairs[0][1]["params"][0]
    common.compare("greenhouse_heater_zones", its, f,
                   note=f"{len(pairs)} updates recorded (descend power, descend duty); params [power, duty]; "
                        f"distance of 10*duty to the nearest integer at iteration 1: {np.abs(10 * d - np.round(10 * d)).min():.3f}")
