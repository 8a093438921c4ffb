import numpy as np
import warp as wp

from warp.tests.test_grad_customs import run_atomic_add


class Problem:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(7)
        self.x = wp.array(rng.uniform(0.5, 3.0, n).astype(np.float32), device=device, requires_grad=True)
        self.w = rng.uniform(0.2, 1.0, n).astype(np.float32)
        self.params = {"x": self.x}

    def _run(self, tape=None):
        counter = wp.zeros(1, dtype=wp.int32, device=self.device)
        thread_ids = wp.zeros(self.n, dtype=wp.int32, device=self.device)
        out = wp.zeros(self.n, dtype=float, device=self.device, requires_grad=True)
        if tape is None:
            wp.launch(run_atomic_add, dim=self.n, inputs=[self.x, counter, thread_ids], outputs=[out], device=self.device)
        else:
            with tape:
                wp.launch(run_atomic_add, dim=self.n, inputs=[self.x, counter, thread_ids], outputs=[out], device=self.device)
        return out

    def objective(self):
        return float(np.dot(self._run().numpy().astype(np.float64), self.w))

    def gradient(self):
        tape = wp.Tape()
        out = self._run(tape)
        tape.backward(grads={out: wp.array(self.w, device=self.device)})
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device, 4096 if scale == "production" else 128)
