import numpy as np
import warp as wp

from warp.tests.test_grad import for_loop_nested_if_grad


class Problem:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(2)
        self.x = wp.array(rng.uniform(0.5, 1.5, n).astype(np.float32), device=device, requires_grad=True)
        self.target = 100.0
        self.params = {"x": self.x}

    def _sum(self, tape=None):
        s = wp.zeros(1, dtype=wp.float32, device=self.device, requires_grad=True)
        if tape is None:
            wp.launch(for_loop_nested_if_grad, dim=1, inputs=[self.n, self.x, s], device=self.device)
        else:
            with tape:
                wp.launch(for_loop_nested_if_grad, dim=1, inputs=[self.n, self.x, s], device=self.device)
        return s

    def objective(self):
        return float(self._sum().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        s = self._sum(tape)
        tape.backward(loss=s)
        g = tape.gradients[self.x].numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device, 32)
