from train import WallFit


class Problem:
    def __init__(self, device, n_led, n_sensor, threads):
        self.fit = WallFit(device, n_led=n_led, n_sensor=n_sensor, threads=threads)
        self.params = {"theta": self.fit.theta}

    def objective(self):
        return self.fit.evaluate()

    def gradient(self):
        return {"theta": self.fit.grad()}

    def train(self, iterations):
        return [self.fit.step(0.2) for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n_led=200, n_sensor=64, threads=256)
    return Problem(device, n_led=8, n_sensor=8, threads=12)
