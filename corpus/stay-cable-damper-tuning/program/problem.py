import tune


class Problem:
    def __init__(self, device, argv):
        self.tuner = tune.DamperTuner(tune.parse_args(argv), device)
        self.params = self.tuner.params
        self.steps = self.tuner.cable.steps

    def objective(self):
        return self.tuner.energy_left()

    def gradient(self):
        return self.tuner.compute_gradients()

    def train(self, iterations):
        return [self.tuner.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, ["--nodes", "64", "--steps", "400"])
    return Problem(device, [])
