import warp as wp

from train import HeaterInversion


class Problem:
    def __init__(self, device, scale):
        n, steps = (12, 60) if scale == "small" else (48, 400)
        self.inv = HeaterInversion(n, steps, n_sensors=24 if scale == "small" else 200, device=device)
        self.params = {"power": self.inv.power}
        self.steps = steps

    def objective(self):
        return self.inv.loss()

    def gradient(self):
        _, g = self.inv.grad()
        return {"power": g}

    def train(self, iterations):
        return self.inv.fit(iterations)


def make_problem(device, scale="small"):
    wp.init()
    return Problem(device, scale)
