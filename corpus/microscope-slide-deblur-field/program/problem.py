import warp as wp

import fit
from imaging import Deblur, synthetic_slide


class SlideProblem:
    def __init__(self, device, size):
        _, obs = synthetic_slide(size, size)
        self.model = Deblur(obs, device=device)
        self.img = wp.array(obs, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"img": self.img}

    def objective(self):
        return float(self.model.forward(self.img).numpy()[0])

    def gradient(self):
        return {"img": fit.iteration(self.model, self.img)[1]}

    def train(self, iterations):
        return fit.deconvolve(self.model, self.img, iterations)


def make_problem(device, scale="small"):
    return SlideProblem(device, 320 if scale == "small" else 1024)
