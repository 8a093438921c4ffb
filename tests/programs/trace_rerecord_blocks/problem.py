import numpy as np
import warp as wp


@wp.kernel
def cube(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


@wp.kernel
def total(y: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, y[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.0, 2.0, -0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.y = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=device)
        self.out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}
        self.tape = wp.Tape()

    def _forward(self):
        self.out.zero_()
        wp.launch(cube, dim=3, inputs=[self.x, self.y], device=self.device)
        wp.launch(total, dim=3, inputs=[self.y, self.out], device=self.device)

    def objective(self):
        self._forward()
        return float(self.out.numpy()[0])

    def gradient(self):
        self.tape.reset()
        self.out.zero_()
        with self.tape:
            wp.launch(cube, dim=3, inputs=[self.x, self.y], device=self.device)
        with self.tape:
            wp.launch(total, dim=3, inputs=[self.y, self.out], device=self.device)
        self.tape.backward(self.out)
        g = self.x.grad.numpy().copy()
        self.tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
