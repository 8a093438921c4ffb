import train


class Problem:
    def __init__(self, device, points):
        args = train.parse_args(["--points", str(points)])
        self.cal = train.Calibrator(args, device)
        self.params = self.cal.params

    def objective(self):
        return self.cal.mean_error()

    def gradient(self):
        return self.cal.compute_gradients()

    def train(self, iterations):
        return [self.cal.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 4096 if scale == "production" else 512)
