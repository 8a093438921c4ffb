from train import AxisCalibration


class Problem:
    def __init__(self, device, n_points):
        self.calib = AxisCalibration(device, n_points=n_points)
        self.params = {"sx": self.calib.sx}

    def objective(self):
        return self.calib.evaluate()

    def gradient(self):
        return {"sx": self.calib.compute_grad()}

    def train(self, iterations):
        return [self.calib.step(2.0) for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n_points=2048)
    return Problem(device, n_points=24)
