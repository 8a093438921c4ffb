"""Twin of greenhouse-floor-heating-loops: 60 Jacobi sweeps of a 1-D steady heat problem with loss, float64."""
import numpy as np

ENTRY = "heating.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "lower", ["power"], ["g"])
N, L, SWEEPS = 10, 5, 60
SET = 18.0 + 2.0 * np.sin(np.linspace(0.0, 3.0, N))


def loss(params):
    q = np.repeat(params[0], N // L)
    t = np.zeros(N)
    for _ in range(SWEEPS):
        p = np.concatenate([[0.0], t, [0.0]])
        t = (p[:-2] + p[2:] + 0.5 * q) / (2.0 + 0.5 * 0.4)
    return float(np.sum((t - SET) ** 2))
