"""Twin of hanging-chain-stiffness-field: damped relaxation of a 1-D hanging spring chain, float64."""
import numpy as np

ENTRY = "calibrate.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "adjust", ["theta"], ["g"])
N, STEPS = 6, 30
SEEN = np.arange(1, N + 1) * 1.0 + np.linspace(0.35, 0.9, N)


def loss(params):
    k = 10.0 * np.exp(params[0])
    x = np.arange(1, N + 1, dtype=np.float64)
    v = np.zeros(N)
    for _ in range(STEPS):
        above = np.concatenate([[0.0], x[:-1]])
        f = -k * (x - above - 1.0) + 1.0
        f[:-1] += k[1:] * (x[1:] - x[:-1] - 1.0)
        v = v + 0.05 * (f - 1.5 * v)
        x = x + 0.05 * v
    return float(np.sum((x - SEEN) ** 2))
