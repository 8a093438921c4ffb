"""Twin of conveyor-motor-pwm-duty-levels: floor-quantised PWM duty (16 levels) into a first-order motor,
plus an effort term; central differences in float64 (step 1e-6, far below the distance to a level)."""
import numpy as np

ENTRY = "drive.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "adjust", ["command"], ["g"])
M = 4
TARGET = np.linspace(1.2, 2.1, M)


def loss(params):
    u = params[0]
    duty = np.floor(np.clip(u, 0.0, 1.0) * 16.0) / 16.0
    w = np.zeros(M)
    for _ in range(20):
        w = w + 0.05 * (3.0 * duty - w) / 0.4
    return float(np.sum((w - TARGET) ** 2 + 0.1 * (u - 0.5) ** 2))
