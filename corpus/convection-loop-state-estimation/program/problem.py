import numpy as np

import assimilate
from loop_model import rk4_np


class Problem:
    def __init__(self, device, window):
        args = assimilate.parse_args(["--window", str(window)])
        self.da = assimilate.Assimilation(args, device)
        self.args = args
        self.params = self.da.params
        self.steps = self.da.steps

    def objective(self):
        return self.da.cost()

    def gradient(self):
        return self.da.compute_gradients()

    def reference_gradient(self):
        x0 = self.da.x0.numpy().astype(np.float64)
        obs = self.da.obs_np
        n_obs, members = obs.shape
        h = 1e-30
        g = np.zeros_like(x0)
        for m in range(members):
            for c in range(3):
                s = x0.astype(np.complex128)
                s[m, c] += 1j * h
                cost = 0.0 + 0.0j
                for k in range(1, self.steps + 1):
                    s = rk4_np(s, self.args.dt)
                    if k % self.args.every == 0:
                        d = s[:, 0] - obs[k // self.args.every - 1]
                        cost += np.sum(d * d)
                g[m, c] = (cost / (n_obs * members)).imag / h
        return {"x0": g}

    def train(self, iterations):
        return [self.da.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 30.0 if scale == "production" else 14.0)
