import numpy as np
import warp as wp


@wp.kernel
def energy(x: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, w[i] * x[i] * x[i] + wp.sin(x[i]))


class Problem:
    factor = 2

    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([0.7, -1.3, 2.1, 0.05]), dtype=wp.float64, requires_grad=True, device=device)
        self.w = wp.array(np.array([1.0, 0.5, 2.0, 3.0]), dtype=wp.float64, device=device)
        self.params = {"x": self.x}

    def _launch(self, out):
        wp.launch(energy, dim=4, inputs=[self.x, self.w, out], device=self.device)

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        self._launch(out)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._launch(out)
        tape.backward(grads={out: wp.array([float(self.factor)], dtype=wp.float64, device=self.device)})
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
