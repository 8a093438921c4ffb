"""Twin of wave-flume-paddle-amplitudes: damped leapfrog 1-D wave equation driven by a three-tone paddle
at the left end (reflecting right end), 30 steps, float64."""
import numpy as np

ENTRY = "flume.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "paddle_update", ["amp"], ["g"])
N, STEPS, DT = 12, 30, 0.1
OMEGA = np.array([0.8, 1.3, 2.1])


def _run(amp):
    u, up = np.zeros(N), np.zeros(N)
    for k in range(STEPS):
        left = np.concatenate([[np.sum(amp * np.sin(OMEGA * k * DT))], u[:-1]])
        right = np.concatenate([u[1:], [u[-1]]])
        lap = left - 2 * u + right
        un = (2 * u - (1 - 0.02) * up + 0.5 * lap) / 1.02
        up, u = u, un
    return u


WANTED = _run(np.array([0.3, -0.2, 0.15]))


def loss(params):
    return float(np.sum((_run(params[0]) - WANTED) ** 2))
