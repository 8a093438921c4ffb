import numpy as np
import warp as wp


@wp.kernel
def cube_sum(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i] * x[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.0, 2.0, -0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(cube_sum, dim=3, inputs=[self.x, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(cube_sum, dim=3, inputs=[self.x, out], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
