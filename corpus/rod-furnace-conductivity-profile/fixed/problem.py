import train
from model import FurnaceRod


class RodProblem:
    def __init__(self, device, cells, steps):
        self.model = FurnaceRod(cells, steps, device)
        self.steps = steps
        self.params = {"log_kappa": self.model.log_kappa}

    def objective(self):
        return self.model.evaluate()

    def gradient(self):
        return {"log_kappa": train.gradient_step(self.model)[1]}

    def train(self, iterations):
        return train.optimise(self.model, iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return RodProblem(device, 16, 40)
    return RodProblem(device, 128, 600)
