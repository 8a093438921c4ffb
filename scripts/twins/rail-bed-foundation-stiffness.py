"""Twin of rail-bed-foundation-stiffness: cost(k) = -2 min_u E(u; k) + price |k - 2|^2 for a rail on a
nonlinear Winkler bed whose load includes the ballast's own weight (density * k). min_u by Newton's
method on the analytic gradient and Hessian (to machine precision); float64."""
import numpy as np

ENTRY = "railbed.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "redesign", ["bed"], ["g"])
N, RAIL, RHO = 9, 0.3, 0.1
AXLE = np.where(np.arange(N) % 3 == 1, 1.0, 0.2)


def _energy(u, k, f):
    return 0.5 * np.sum(k * u * u) + 0.125 * np.sum(u ** 4) - np.sum(f * u) + 0.5 * RAIL * np.sum(np.diff(u) ** 2)


def _min_energy(k):
    f = AXLE + RHO * k
    lap = np.zeros((N, N))
    for i in range(N - 1):
        lap[i, i] += 1
        lap[i + 1, i + 1] += 1
        lap[i, i + 1] -= 1
        lap[i + 1, i] -= 1
    u = np.zeros(N)
    for _ in range(50):
        g = k * u + 0.5 * u ** 3 - f + RAIL * lap @ u
        h = np.diag(k + 1.5 * u * u) + RAIL * lap
        u = u - np.linalg.solve(h, g)
    return _energy(u, k, f)


def loss(params):
    k = params[0]
    return float(-2.0 * _min_energy(k) + 0.05 * np.sum((k - 2.0) ** 2))
