import numpy as np
import warp as wp

from warp.tests.test_grad import test_struct_attribute_gradient_kernel


class Problem:
    def __init__(self, device, n):
        self.device = device
        rng = np.random.default_rng(5)
        self.src = wp.array(rng.uniform(-2.0, 2.0, n).astype(np.float32), device=device, requires_grad=True)
        self.target = rng.uniform(-3.0, 3.0, n)
        self.params = {"src": self.src}

    def objective(self):
        res = wp.empty_like(self.src)
        wp.launch(test_struct_attribute_gradient_kernel, dim=len(self.src), inputs=[self.src, res], device=self.device)
        return float(0.5 * np.sum((res.numpy().astype(np.float64) - self.target) ** 2))

    def gradient(self):
        with wp.ScopedDevice(self.device):
            res = wp.empty_like(self.src)
            tape = wp.Tape()
            with tape:
                wp.launch(test_struct_attribute_gradient_kernel, dim=len(self.src), inputs=[self.src, res])
            res.grad.assign((res.numpy() - self.target).astype(np.float32))
            tape.backward()
            g = self.src.grad.numpy().copy()
            tape.zero()
        return {"src": g}


def make_problem(device, scale="small"):
    return Problem(device, 4096 if scale == "production" else 32)
