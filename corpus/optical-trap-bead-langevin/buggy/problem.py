from train import Calibrator
from traps import TrapArray


class Problem:
    def __init__(self, device, beads, steps):
        self.cal = Calibrator(TrapArray(beads, steps, device=device))
        self.steps = steps
        self.params = {"stiffness": self.cal.stiffness, "log_sigma": self.cal.log_sigma}

    def set_seed(self, seed):
        self.cal.traps.seed = int(seed)

    def objective(self):
        return self.cal.loss()

    def gradient(self):
        return self.cal.grads()[1]

    def train(self, iterations):
        return self.cal.fit(iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return Problem(device, 8, 20)
    return Problem(device, 1024, 500)
