"""Twin of curling-stone-release-velocity: stones gliding with drag, Coulomb-like grip and curl, float64.
The loss is evaluated at the release speeds and angles the forward pass used (taken at the ``coast`` launch)."""
import numpy as np

ENTRY = "curling.py"
ARGS = ["--iters", "4"]
HOOK = ("kernel", "push", ["release"], ["g"], "coast", ["release"])
BUTTON = np.array([[4.0, 0.5], [5.0, -0.4], [3.5, 0.0]])


def loss(params):
    r = params[0].reshape(-1, 2)
    v = np.stack([r[:, 0] * np.cos(r[:, 1]), r[:, 0] * np.sin(r[:, 1])], 1)
    p = np.zeros_like(v)
    for _ in range(30):
        speed = np.sqrt(np.sum(v * v, axis=1, keepdims=True) + 0.01)
        curl = np.stack([-v[:, 1], v[:, 0]], 1) * (0.05 / speed)
        v = v + 0.1 * (-0.05 * v - 0.3 * v / speed + curl)
        p = p + 0.1 * v
    return float(np.sum((p - BUTTON) ** 2))
