import numpy as np
import warp as wp


@wp.kernel
def double(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a[i] = wp.float64(2.0) * x[i]


@wp.kernel
def square_limit(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), c: wp.array(dtype=wp.float64)):
    i = wp.tid()
    b[i] = a[i] * a[i]
    a[i] = wp.min(a[i], wp.float64(1.0))


@wp.kernel
def total(b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, b[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.5, 2.0, 0.75]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def _run(self, rg):
        d = self.device
        a, b, c = (wp.zeros(3, dtype=wp.float64, requires_grad=rg, device=d) for _ in range(3))
        out = wp.zeros(1, dtype=wp.float64, requires_grad=rg, device=d)
        wp.launch(double, dim=3, inputs=[self.x, a], device=d)
        wp.launch(square_limit, dim=3, inputs=[a, b, c], device=d)
        wp.launch(total, dim=3, inputs=[b, out], device=d)
        return out

    def objective(self):
        return float(self._run(False).numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self._run(True)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
