import numpy as np
import warp as wp

from warp.tests.test_grad_customs import test_nested_custom_grad_kernel


class Problem:
    def __init__(self, device, n):
        self.device = device
        rng = np.random.default_rng(11)
        self.vecs = wp.array(rng.normal(0.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, device=device, requires_grad=True)
        self.w = rng.uniform(0.5, 2.0, n).astype(np.float32)
        self.params = {"vecs": self.vecs}

    def objective(self):
        norms = wp.zeros(self.vecs.shape[0], dtype=wp.float32, device=self.device)
        wp.launch(test_nested_custom_grad_kernel, dim=self.vecs.shape[0], inputs=[self.vecs], outputs=[norms], device=self.device)
        return float(np.dot(norms.numpy().astype(np.float64), self.w))

    def gradient(self):
        norms = wp.zeros(self.vecs.shape[0], dtype=wp.float32, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(test_nested_custom_grad_kernel, dim=self.vecs.shape[0], inputs=[self.vecs], outputs=[norms], device=self.device)
        tape.backward(grads={norms: wp.array(self.w, device=self.device)})
        g = self.vecs.grad.numpy().copy()
        tape.zero()
        return {"vecs": g}


def make_problem(device, scale="small"):
    return Problem(device, 2048 if scale == "production" else 24)
