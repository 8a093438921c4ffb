import numpy as np
import warp as wp


@wp.kernel
def scale(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.float64(3.0) * x[i]


@wp.kernel
def square_sum(y: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, y[i] * y[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.0, -2.0, 0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def _forward(self, y, out):
        wp.launch(scale, dim=3, inputs=[self.x, y], device=self.device)
        wp.launch(square_sum, dim=3, inputs=[y, out], device=self.device)

    def objective(self):
        y = wp.zeros(3, dtype=wp.float64, device=self.device)
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        self._forward(y, out)
        return float(out.numpy()[0])

    def gradient(self):
        y = wp.zeros(3, dtype=wp.float64, device=self.device)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._forward(y, out)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
