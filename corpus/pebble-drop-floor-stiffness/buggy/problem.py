import math

import warp as wp

import fit
from bed import PebbleBed


class Problem:
    def __init__(self, device, n, frames, dt):
        self.bed = PebbleBed(n, frames, dt, device)
        self.steps = frames
        self.log_k = wp.full(n, math.log(5.0e3), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"log_k": self.log_k}

    def objective(self):
        return float(self.bed.simulate(self.log_k).numpy()[0])

    def gradient(self):
        return {"log_k": fit.misfit_gradient(self.bed, self.log_k)[1]}

    def train(self, iterations):
        return fit.run_sgd(self.bed, self.log_k, iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return Problem(device, 12, 300, 5.0e-4)
    return Problem(device, 512, 1200, 2.5e-4)
