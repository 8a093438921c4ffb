import warp as wp

import train
from sim import Spray


class SprayFit:
    def __init__(self, device, n, steps):
        self.spray = Spray(n, steps, device=device)
        self.steps = steps
        self.v_launch = wp.zeros(n, dtype=wp.vec3d, device=device, requires_grad=True)
        self.params = {"v_launch": self.v_launch}

    def objective(self):
        with wp.ScopedDevice(self.spray.device):
            loss = self.spray.run(self.v_launch)
        return float(loss.numpy()[0])

    def gradient(self):
        _, g = train.loss_and_grad(self.spray, self.v_launch)
        return {"v_launch": g}

    def train(self, iterations):
        return train.fit(self.spray, self.v_launch, iterations)


def make_problem(device, scale="small"):
    if scale == "small":
        return SprayFit(device, 12, 30)
    return SprayFit(device, 256, 120)
