from train import TrailerPlan


class Problem:
    def __init__(self, device, n_crates):
        self.plan = TrailerPlan(device, n_crates=n_crates)
        self.params = {"x": self.plan.x}

    def objective(self):
        return self.plan.evaluate()

    def gradient(self):
        return {"x": self.plan.grad()}

    def train(self, iterations):
        return [self.plan.step(0.05) for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n_crates=64)
    return Problem(device, n_crates=8)
