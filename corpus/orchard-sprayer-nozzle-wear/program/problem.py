import numpy as np

import fit_rates


class Problem:
    def __init__(self, device, points):
        self.fit = fit_rates.RateFit(fit_rates.parse_args(["--points", str(points)]), device)
        self.params = self.fit.params

    def objective(self):
        return self.fit.loss()

    def gradient(self):
        return self.fit.compute_gradients()

    def reference_gradient(self):
        c = self.fit.canopy
        p = c.points_np.astype(np.float64)
        nz = c.nozzles_np.astype(np.float64)
        w = np.exp(-((p[:, None, :] - nz[None, :, :]) ** 2).sum(axis=2) / (2.0 * c.sigma**2))
        r = w @ self.fit.rate.numpy().astype(np.float64) - c.target_np.astype(np.float64)
        return {"rate": 2.0 * (w.T @ r)}

    def train(self, iterations):
        return [self.fit.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 200000 if scale == "production" else 50000)
