import numpy as np
import warp as wp


@wp.kernel
def double(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] = wp.float64(2.0) * x[i]


@wp.kernel
def square(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64)):
    i = wp.tid()
    b[i] = a[i] * a[i]


@wp.kernel
def total(b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, b[i])


@wp.kernel
def reset(a: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] = wp.float64(1.0)


@wp.kernel
def report(a: wp.array(dtype=wp.float64), r: wp.array(dtype=wp.float64)):
    i = wp.tid()
    r[i] = a[i]


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.5, -2.0, 0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def objective(self):
        d = self.device
        a, b = wp.zeros(3, dtype=wp.float64, device=d), wp.zeros(3, dtype=wp.float64, device=d)
        out = wp.zeros(1, dtype=wp.float64, device=d)
        wp.launch(double, dim=3, inputs=[self.x, a], device=d)
        wp.launch(square, dim=3, inputs=[a, b], device=d)
        wp.launch(total, dim=3, inputs=[b, out], device=d)
        return float(out.numpy()[0])

    def gradient(self):
        d = self.device
        a = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=d)
        b = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=d)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=d)
        tape = wp.Tape()
        with tape:
            wp.launch(double, dim=3, inputs=[self.x, a], device=d)
            wp.launch(square, dim=3, inputs=[a, b], device=d)
            wp.launch(reset, dim=3, inputs=[wp.zeros(3, dtype=wp.float64, requires_grad=True, device=d)], device=d)
            wp.launch(total, dim=3, inputs=[b, out], device=d)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
