"""Twin of drone-show-formation-offsets: PD-controlled point drones with quadratic drag, 20 steps, float64."""
import numpy as np

ENTRY = "formation.py"
ARGS = ["--iters", "6"]
HOOK = ("kernel", "retarget", ["offset"], ["g"])
D = 5
ANG = np.linspace(0.0, 2.0 * np.pi, D, endpoint=False)
PATTERN = np.stack([np.cos(ANG), np.sin(ANG)], 1).reshape(-1)
ANCHOR = np.tile([0.2, -0.1], D)


def loss(params):
    off = params[0]
    x = np.zeros(2 * D)
    v = np.zeros(2 * D)
    for _ in range(20):
        a = 4.0 * (ANCHOR + off - x) - 1.5 * v - 0.6 * np.abs(v) * v
        v = v + 0.05 * a
        x = x + 0.05 * v
    return float(np.sum((x - PATTERN) ** 2))
