import train


class Problem:
    def __init__(self, device, stations):
        self.setup = train.StrokeSetup(train.parse_args(["--stations", str(stations)]), device)
        self.params = self.setup.params

    def objective(self):
        return self.setup.cost()

    def gradient(self):
        return self.setup.compute_gradients()

    def train(self, iterations):
        return [self.setup.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    return Problem(device, 200 if scale == "production" else 10)
