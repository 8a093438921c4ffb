import calibrate
from scene import Harbour


class Problem:
    def __init__(self, device, n, steps):
        self.fit = calibrate.BuoyFit(Harbour(n, steps, device=device))
        self.steps = steps
        self.params = {"mass": self.fit.mass, "drag": self.fit.drag}

    def objective(self):
        return self.fit.loss_value()

    def gradient(self):
        _, gm, gd = self.fit.gradients()
        return {"mass": gm, "drag": gd}

    def train(self, iterations):
        return calibrate.run(self.fit, iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return Problem(device, 8, 60)
    return Problem(device, 400, 400)
