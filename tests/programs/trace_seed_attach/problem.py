import numpy as np
import warp as wp


@wp.kernel
def residual(x: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), l: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - t[i]
    l[i] = d * d


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.0, 2.0, -0.5, 0.25]), dtype=wp.float64, requires_grad=True, device=device)
        self.t = wp.array(np.array([0.5, 1.0, 0.0, 1.0]), dtype=wp.float64, device=device)
        self.seed = wp.array(np.ones(4), dtype=wp.float64, device=device)
        self.params = {"x": self.x}

    def _losses(self, rg):
        l = wp.zeros(4, dtype=wp.float64, requires_grad=rg, device=self.device)
        wp.launch(residual, dim=4, inputs=[self.x, self.t, l], device=self.device)
        return l

    def objective(self):
        return float(np.sum(self._losses(False).numpy()))

    def gradient(self):
        tape = wp.Tape()
        with tape:
            l = self._losses(True)
        l.grad = self.seed
        tape.backward()
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
