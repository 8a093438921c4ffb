import numpy as np
import warp as wp


@wp.kernel
def double(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] = wp.float64(2.0) * x[i]


@wp.kernel
def square_sum(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, a[i] * a[i])


@wp.kernel
def reset(a: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] = wp.float64(1.0)


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.5, -2.0, 0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def _forward(self, a, out):
        wp.launch(double, dim=3, inputs=[self.x, a], device=self.device)
        wp.launch(square_sum, dim=3, inputs=[a, out], device=self.device)
        wp.launch(reset, dim=3, inputs=[a], device=self.device)

    def objective(self):
        a = wp.zeros(3, dtype=wp.float64, device=self.device)
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        self._forward(a, out)
        return float(out.numpy()[0])

    def gradient(self):
        a = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=self.device)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._forward(a, out)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
