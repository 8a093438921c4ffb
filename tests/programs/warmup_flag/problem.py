import numpy as np
import warp as wp


@wp.kernel
def energy(x: wp.array(dtype=wp.float64), stage: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i] + stage[0] * x[i] * x[i] * x[i])


@wp.kernel
def energy_grad(x: wp.array(dtype=wp.float64), stage: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64)):
    i = wp.tid()
    g[i] = wp.float64(2.0) * x[i] + SCALE * stage[0] * x[i] * x[i]


SCALE = wp.constant(wp.float64(2.0))


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([0.5, -0.25, 0.75]), dtype=wp.float64, requires_grad=True, device=device)
        self.stage = wp.zeros(1, dtype=wp.float64, device=device)
        self.params = {"x": self.x}

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(energy, dim=3, inputs=[self.x, self.stage, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        g = wp.zeros(3, dtype=wp.float64, device=self.device)
        wp.launch(energy_grad, dim=3, inputs=[self.x, self.stage, g], device=self.device)
        return {"x": g.numpy()}

    def train(self, iterations):
        losses = []
        for _ in range(iterations):
            self.stage.fill_(1.0)
            g = self.gradient()["x"]
            self.x.assign(self.x.numpy() - 0.05 * g)
            losses.append(self.objective())
        return losses


def make_problem(device, scale="small"):
    return Problem(device)
