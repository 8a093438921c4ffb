"""Twin of trebuchet-shot-adam-settings: drag ballistics from (speed, angle), 30 steps, float64 model of a
float32 script (expected agreement about 1e-5 relative)."""
import numpy as np

ENTRY = "range_table.py"
ARGS = ["--iters", "4"]
HOOK = ("optim",)
TARGET = np.array([[18.0, 1.0], [22.0, 3.0], [15.0, 4.0]])


def loss(params):
    s = params[0].reshape(-1, 2)
    v = np.stack([s[:, 0] * np.cos(s[:, 1]), s[:, 0] * np.sin(s[:, 1])], 1)
    p = np.tile([0.0, 2.0], (s.shape[0], 1))
    for _ in range(30):
        sp = np.linalg.norm(v, axis=1, keepdims=True)
        v = v + 0.05 * (np.array([0.0, -9.81]) - 0.01 * sp * v)
        p = p + 0.05 * v
    return float(np.sum((p - TARGET) ** 2))
