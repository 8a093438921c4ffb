import warp as wp

from train import Fit


class Problem:
    def __init__(self, device, scale):
        steps = 80 if scale == "small" else 400
        self.fit = Fit(device=device, steps=steps)
        self.params = {"wind": self.fit.wind}
        self.steps = steps

    def objective(self):
        return self.fit.evaluate()

    def gradient(self):
        _, g = self.fit.step_gradient()
        return {"wind": g}

    def train(self, iterations):
        return self.fit.run(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
