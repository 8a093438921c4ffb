from train import StrokePlan


class Problem:
    def __init__(self, device, knots, steps_per_knot):
        self.plan = StrokePlan(device, knots=knots, steps_per_knot=steps_per_knot)
        self.params = {"force": self.plan.force}
        self.steps = knots * steps_per_knot

    def objective(self):
        return self.plan.evaluate()

    def gradient(self):
        return {"force": self.plan.grad()}

    def train(self, iterations):
        return [self.plan.step(20.0) for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, knots=32, steps_per_knot=10)
    return Problem(device, knots=8, steps_per_knot=5)
