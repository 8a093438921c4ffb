"""Twin of heat-rod-heater-profile: explicit 1-D heat equation with a Gaussian-basis heater, float64."""
import numpy as np

ENTRY = "train.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "descend", ["amp"], ["g"])
CELLS, STEPS, NB = 16, 20, 4


def _heat(amp):
    x = np.arange(CELLS) + 0.5
    c = np.linspace(2.0, CELLS - 2.0, NB)
    q = (amp[None, :] * np.exp(-(((x[:, None] - c[None, :]) / (CELLS / 6.0)) ** 2))).sum(1)
    t = np.zeros(CELLS)
    for _ in range(STEPS):
        p = np.concatenate([[0.0], t, [0.0]])
        t = t + 0.2 * (p[:-2] - 2 * t + p[2:]) + 0.05 * (q - 0.3 * t)
    return t


TARGET = _heat(np.array([1.0, 0.2, 0.7, 1.3]))


def loss(params):
    return float(np.sum((_heat(params[0]) - TARGET) ** 2) / CELLS)
