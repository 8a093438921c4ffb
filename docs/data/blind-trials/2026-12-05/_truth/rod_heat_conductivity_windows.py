"""Truth for rod_heat_conductivity_windows: twin of the printed loss, the sum of the three window misfits
of one continuous 60-step rollout (each window starts from the state the previous one ended in)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "rod_heat_conductivity_windows", "train.py")
CELLS, WINDOW, NW, DT = 12, 20, 3, 0.2
x = np.linspace(0.0, 1.0, CELLS)
T0 = 20.0 + 80.0 * np.exp(-((x - 0.35) / 0.15) ** 2)


def run(kappa):
    temp, snaps = T0.copy(), []
    for w in range(NW):
        for _ in range(WINDOW):
            kf = 0.5 * (kappa[:-1] + kappa[1:])
            flux = np.zeros_like(temp)
            flux[:-1] += kf * (temp[1:] - temp[:-1])
            flux[1:] += kf * (temp[:-1] - temp[1:])
            temp = temp + DT * flux
        snaps.append(temp.copy())
    return snaps


SNAPS = run(1.0 + 0.4 * np.sin(2.0 * np.pi * x))


def f(params):
    s = run(params[0])
    return sum(np.sum((a - b) ** 2) / (CELLS * 100.0) for a, b in zip(s, SNAPS))


if __name__ == "__main__":
    common.install(assign=True)
    common.run_script(SCRIPT)
    ptrs = [e["ptr"] for e in common.EVENTS]
    kptr = ptrs[1]
    ev = [e for e in common.EVENTS if e["ptr"] == kptr]
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("rod_heat_conductivity_windows", its, f, note=f"{len(ev)} updates recorded (kappa.assign)")
