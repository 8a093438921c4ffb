"""Twin of forged-slab-quench-conductivity: explicit 1-D conduction into a bath at 0, 20 steps, float64."""
import numpy as np

ENTRY = "quench.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "update", ["kappa"], ["g"])
N, STEPS = 8, 20


def _run(k):
    t = np.ones(N)
    for _ in range(STEPS):
        left = np.concatenate([[0.0], t[:-1]])
        flux = k * (left - t)
        flux[:-1] += k[1:] * (t[1:] - t[:-1])
        t = t + 0.1 * flux
    return t


PROBE = _run(np.linspace(1.2, 0.6, N))


def loss(params):
    return float(np.sum((_run(params[0]) - PROBE) ** 2))
