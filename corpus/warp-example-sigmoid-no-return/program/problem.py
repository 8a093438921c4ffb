import numpy as np
import warp as wp

from warp.tests.test_grad_customs import eval_sigmoid


class Problem:
    def __init__(self, device, n):
        self.device = device
        rng = np.random.default_rng(3)
        self.xs = wp.array(rng.uniform(-4.0, 4.0, n).astype(np.float32), device=device, requires_grad=True)
        self.target = rng.uniform(0.1, 0.9, n)
        self.params = {"xs": self.xs}

    def _forward(self):
        ys = wp.zeros_like(self.xs)
        wp.launch(eval_sigmoid, dim=len(self.xs), inputs=[self.xs], outputs=[ys], device=self.device)
        return ys

    def objective(self):
        ys = self._forward().numpy().astype(np.float64)
        return float(0.5 * np.sum((ys - self.target) ** 2))

    def gradient(self):
        ys = wp.zeros_like(self.xs)
        tape = wp.Tape()
        with tape:
            wp.launch(eval_sigmoid, dim=len(self.xs), inputs=[self.xs], outputs=[ys], device=self.device)
        ys.grad.assign((ys.numpy() - self.target).astype(np.float32))
        tape.backward()
        g = self.xs.grad.numpy().copy()
        tape.zero()
        return {"xs": g}


def make_problem(device, scale="small"):
    return Problem(device, 4096 if scale == "production" else 48)
