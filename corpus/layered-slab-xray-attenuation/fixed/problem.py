import warp as wp

from invert import Inversion


class Problem:
    def __init__(self, device, scale):
        self.inv = Inversion(24 if scale == "small" else 4096, device=device)
        self.params = {"mu": self.inv.mu}

    def objective(self):
        return self.inv.misfit()

    def gradient(self):
        return {"mu": self.inv.gradient()[1]}

    def train(self, iterations):
        return self.inv.run(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
