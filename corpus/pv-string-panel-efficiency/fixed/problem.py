from train import StringFit


class Problem:
    def __init__(self, device, n_strings):
        self.fit = StringFit(device, n_strings=n_strings)
        self.params = {"eff": self.fit.eff}

    def objective(self):
        return self.fit.evaluate()

    def gradient(self):
        return {"eff": self.fit.grad()}

    def train(self, iterations):
        return [self.fit.step(0.5) for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n_strings=256)
    return Problem(device, n_strings=4)
