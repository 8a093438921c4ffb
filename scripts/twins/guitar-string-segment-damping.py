"""Twin of guitar-string-segment-damping: damped discrete string, 24 semi-implicit Euler steps, float64."""
import numpy as np

ENTRY = "string_fit.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "descend", ["damping"], ["g"])
N, STEPS = 8, 24
X = np.linspace(0.0, 1.0, N + 2)[1:-1]
Y0 = np.exp(-30.0 * (X - 0.3) ** 2)


def _run(c):
    y, v = Y0.copy(), np.zeros(N)
    for _ in range(STEPS):
        p = np.concatenate([[0.0], y, [0.0]])
        v = v + 0.1 * ((p[:-2] - 2 * y + p[2:]) - c * v)
        y = y + 0.1 * v
    return y


HEARD = _run(np.linspace(0.2, 0.8, N))


def loss(params):
    return float(np.sum((_run(params[0]) - HEARD) ** 2))
