import numpy as np
import warp as wp


@wp.kernel
def noisy_sq(x: wp.array(dtype=wp.float64), n: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i] + n[i]
    wp.atomic_add(out, 0, v * v)


class Problem:
    def __init__(self, device):
        self.device = device
        self.rng = np.random.default_rng()
        self.x = wp.array(np.array([0.5, 1.0, -1.0]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def set_seed(self, seed):
        self.rng = np.random.default_rng(seed)

    def _noise(self):
        return wp.array(0.1 * self.rng.standard_normal(3), dtype=wp.float64, device=self.device)

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(noisy_sq, dim=3, inputs=[self.x, self._noise(), out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(noisy_sq, dim=3, inputs=[self.x, self._noise(), out], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
