"""Twin of arm-joint-torque-spline: a damped pendulum arm driven by a piecewise-linear torque, float64."""
import numpy as np

ENTRY = "train.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "gradient_step", ["knots"], ["g"])
STEPS, DT, I, B, MGL, GOAL, EFFORT = 40, 0.025, 0.4, 0.15, 1.2, 1.0, 1e-3


def loss(params):
    c = params[0]
    nk = c.size
    th = om = 0.0
    for k in range(STEPS):
        s = k / (STEPS - 1) * (nk - 1)
        j = min(int(s), nk - 2)
        w = s - j
        tau = (1 - w) * c[j] + w * c[j + 1]
        om = om + DT * (tau - B * om - MGL * np.sin(th)) / I
        th = th + DT * om
    return float((th - GOAL) ** 2 + 0.1 * om * om + EFFORT * np.sum(c * c))
