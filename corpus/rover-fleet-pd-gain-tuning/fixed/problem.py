from fleet import Fleet
from tune import GainTuner


class Problem:
    def __init__(self, device, n, horizon):
        self.tuner = GainTuner(Fleet(n, horizon, device=device))
        self.steps = horizon
        self.params = {"kp": self.tuner.kp, "kd": self.tuner.kd}

    def objective(self):
        return self.tuner.total_cost()

    def gradient(self):
        _, (gp, gd) = self.tuner.gains_gradient()
        return {"kp": gp, "kd": gd}

    def train(self, iterations):
        return self.tuner.run(iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return Problem(device, 12, 40)
    return Problem(device, 2048, 400)
