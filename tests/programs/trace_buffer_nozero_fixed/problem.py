import numpy as np
import warp as wp


@wp.kernel
def deposit(x: wp.array(dtype=wp.float64), field: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(field, i % 2, x[i] * x[i])


@wp.kernel
def error(field: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = field[i] - wp.float64(1.0)
    wp.atomic_add(out, 0, d * d)


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.0, 0.5, -0.5, 0.25]), dtype=wp.float64, requires_grad=True, device=device)
        self.field = wp.zeros(2, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def _forward(self, out):
        self.field.zero_()
        wp.launch(deposit, dim=4, inputs=[self.x, self.field], device=self.device)
        wp.launch(error, dim=2, inputs=[self.field, out], device=self.device)

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        self._forward(out)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._forward(out)
        self.x.grad.zero_()
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
