import numpy as np
import warp as wp

N = 20000


@wp.kernel
def mean_square(x: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i] / float(N))


class Problem:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(3)
        self.x = wp.array(rng.uniform(0.5, 1.5, N).astype(np.float32), dtype=wp.float32, requires_grad=True,
                          device=device)
        self.params = {"x": self.x}

    def objective(self):
        out = wp.zeros(1, dtype=wp.float32, device=self.device)
        wp.launch(mean_square, dim=N, inputs=[self.x, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float32, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(mean_square, dim=N, inputs=[self.x, out], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
