"""Twin of canal-pool-gate-openings: a cascade of six pools with orifice gates (outflow g sqrt(h)),
25 explicit steps; loss = level misfit + 0.5 * sum of squared neighbour gate differences, float64."""
import numpy as np

ENTRY = "schedule.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "combine_step", ["gate"], ["g_data", "g_prior"])
N = 6


def loss(params):
    g = params[0]
    h = np.ones(N)
    for _ in range(25):
        out = g * np.sqrt(h)
        up = np.concatenate([[0.5], out[:-1]])
        h = h + 0.2 * (up - out) / 2.0
    return float(np.sum((h - 1.2) ** 2) + 0.5 * np.sum(np.diff(g) ** 2))


def combine(grads):
    return [grads[0] + grads[1]]
