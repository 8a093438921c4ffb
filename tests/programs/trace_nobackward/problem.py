import numpy as np
import warp as wp


@wp.kernel(enable_backward=False)
def cube_sum(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i] * x[i])


@wp.kernel
def histogram(x: wp.array(dtype=wp.float64), bins: wp.array(dtype=wp.int32)):
    i = wp.tid()
    k = wp.clamp(int(x[i] + wp.float64(2.0)), 0, 3)
    wp.atomic_add(bins, k, 1)


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.0, 2.0, -0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.bins = wp.zeros(4, dtype=wp.int32, device=device)
        self.params = {"x": self.x}

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(cube_sum, dim=3, inputs=[self.x, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        self.bins.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(cube_sum, dim=3, inputs=[self.x, out], device=self.device)
            wp.launch(histogram, dim=3, inputs=[self.x, self.bins], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
