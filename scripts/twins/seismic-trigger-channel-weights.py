"""Twin of seismic-trigger-channel-weights: Heaviside trigger with the fast-sigmoid surrogate derivative
1 / (1 + 5|v|)^2 (a deliberate surrogate), analytic in float64."""
import numpy as np

ENTRY = "train_trigger.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "descend", ["w"], ["g"])
E, C = 40, 5
_rng = np.random.default_rng(17)
X = _rng.uniform(0.0, 1.0, (E, C))
LABEL = (X @ np.linspace(0.9, 0.1, C) > 0.5 * C * 0.5).astype(np.float64)


def grad(params):
    v = X @ params[0] - 1.0
    fire = (v > 0.0).astype(np.float64)
    dv = 2.0 * (fire - LABEL) / (1.0 + 5.0 * np.abs(v)) ** 2 / E
    return [X.T @ dv]
