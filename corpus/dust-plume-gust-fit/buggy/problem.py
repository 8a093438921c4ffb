import numpy as np
import warp as wp

import plume


class Problem:
    def __init__(self, device, n, steps):
        self.device = device
        self.steps = steps
        rng = np.random.default_rng(11)
        self.start = wp.array(rng.uniform(-1.0, 1.0, (n, 2)), dtype=wp.vec2d, device=device)
        self.target = wp.array(rng.uniform(-1.0, 1.0, (n, 2)) + np.array([0.8, 0.3]), dtype=wp.vec2d, device=device)
        self.gust = wp.array(rng.uniform(0.5, 1.5, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"gust": self.gust}
        self.wind = wp.vec2d(0.6, 0.2)
        self.dt = wp.float64(0.25)
        self.seed = 2024

    def forward(self):
        return plume.release(self.start, self.gust, self.target, self.steps, self.wind, self.dt, self.seed, self.device)

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, 64, 12)
    return Problem(device, 8, 5)
