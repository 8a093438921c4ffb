import train


class Problem:
    def __init__(self, device, points):
        args = train.parse_args(["--points", str(points)])
        self.smoother = train.Smoother(args, device)
        self.params = self.smoother.params

    def objective(self):
        return self.smoother.loss()

    def gradient(self):
        return self.smoother.compute_gradients()

    def train(self, iterations):
        return [self.smoother.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 400 if scale == "production" else 12)
