import fit


class Problem:
    def __init__(self, device, columns):
        self.fit = fit.RestLengthFit(fit.parse_args(["--columns", str(columns)]), device)
        self.params = self.fit.params

    def objective(self):
        return self.fit.misfit()

    def gradient(self):
        return self.fit.compute_gradients()

    def train(self, iterations):
        return [self.fit.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 40 if scale == "production" else 4)
