import spreader


class Problem:
    def __init__(self, device, vanes):
        self.sp = spreader.SpinnerSpread(spreader.parse_args(["--vanes", str(vanes)]), device)
        self.params = self.sp.params
        self.steps = self.sp.steps

    def objective(self):
        return self.sp.spread_error()

    def gradient(self):
        return self.sp.compute_gradients()

    def train(self, iterations):
        return [self.sp.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 96 if scale == "production" else 6)
