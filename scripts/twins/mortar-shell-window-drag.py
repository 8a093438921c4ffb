"""Twin of mortar-shell-window-drag: quadratic-drag ballistics in head wind, windows from radar states, float64."""
import numpy as np

ENTRY = "fit_drag.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "step_coef", ["coef"], ["g"])
S, W, STEPS, DT = 4, 4, 10, 0.05


def _fly(p, v, c, steps):
    for _ in range(steps):
        air = v - np.array([c[1], 0.0])
        sp = np.linalg.norm(air, axis=1, keepdims=True)
        v = v + DT * (np.array([0.0, -9.81]) - c[0] * sp * air)
        p = p + DT * v
    return p, v


_rng = np.random.default_rng(7)
_ang = _rng.uniform(0.6, 1.1, S)
_spd = _rng.uniform(30.0, 45.0, S)
STARTS = []
_p, _v = np.zeros((S, 2)), np.stack([_spd * np.cos(_ang), _spd * np.sin(_ang)], 1)
for _ in range(W + 1):
    STARTS.append((_p.copy(), _v.copy()))
    _p, _v = _fly(_p, _v, np.array([0.004, 3.0]), STEPS)


def loss(params):
    c = params[0]
    tot = 0.0
    for w in range(W):
        p, _ = _fly(STARTS[w][0], STARTS[w][1], c, STEPS)
        tot += np.sum((p - STARTS[w + 1][0]) ** 2)
    return float(tot / W)
