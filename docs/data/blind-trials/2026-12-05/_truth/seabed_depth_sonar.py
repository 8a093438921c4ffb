"""Truth for seabed_depth_sonar: twin of the printed loss (travel-time misfit + roughness prior)."""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(__file__))
import common

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "seabed_depth_sonar", "train.py")
CELLS, CELL, OFF, SOUND, PRIOR = 20, 5.0, 8.0, 1.5, 0.5
rng = np.random.default_rng(7)
POS = np.sort(rng.uniform(0.0, CELL * (CELLS - 1) - 1e-3, 30))
XS = np.arange(CELLS) * CELL
TRUE = 30.0 + 6.0 * np.sin(XS / 25.0) + 0.08 * XS
OBS = 2.0 * np.sqrt(np.interp(POS, XS, TRUE) ** 2 + OFF ** 2) / SOUND + rng.normal(0.0, 0.05, POS.size)
S = POS / CELL
K = S.astype(int)
A = S - K


def f(params):
    d = params[0]
    dd = (1.0 - A) * d[K] + A * d[K + 1]
    t = 2.0 * np.sqrt(dd * dd + OFF * OFF) / SOUND
    return np.sum((t - OBS) ** 2) + PRIOR * np.sum(np.diff(d) ** 2)


if __name__ == "__main__":
    common.install(assign=True)
    common.run_script(SCRIPT)
    ev = common.EVENTS
    its = [(k + 1, ev[k]["params"], ev[k]["grad"]) for k in (0, 1, 9, len(ev) - 1)]
    common.compare("seabed_depth_sonar", its, f, note=f"{len(ev)} updates recorded (depth.assign)")
