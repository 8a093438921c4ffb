import numpy as np
import warp as wp

import recon
from renderer import TwoViewRenderer


class Problem:
    def __init__(self, device, res):
        self.renderer = TwoViewRenderer(res, device=device)
        start = -1.0 + 0.3 * np.random.default_rng(2).standard_normal((res, res))
        self.raw = wp.array(start.astype(np.float32), dtype=float, device=device, requires_grad=True)
        self.params = {"raw": self.raw}

    def objective(self):
        return float(self.renderer.render_loss(self.raw).numpy()[0])

    def gradient(self):
        return {"raw": recon.density_gradient(self.renderer, self.raw)[1].numpy()}

    def train(self, iterations):
        return recon.reconstruct(self.renderer, self.raw, iterations)


def make_problem(device, scale="small"):
    return Problem(device, 10 if scale == "small" else 256)
