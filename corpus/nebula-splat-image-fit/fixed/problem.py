import warp as wp

from fit import SplatFit


class Problem:
    def __init__(self, device, scale):
        self.fit = SplatFit(48, 8, device=device) if scale == "small" else SplatFit(256, 64, device=device)
        self.params = self.fit.params()

    def objective(self):
        return self.fit.mse()

    def gradient(self):
        return self.fit.grads()[1]

    def train(self, iterations):
        return self.fit.run(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
