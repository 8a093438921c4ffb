import numpy as np
import warp as wp


@wp.kernel
def step(x: wp.array(dtype=wp.float64), s_in: wp.array(dtype=wp.float64), s_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s_out[i] = s_in[i] * x[i] + wp.float64(0.5)


@wp.kernel
def energy(s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, s[i] * s[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.5, -0.5, 0.75]), dtype=wp.float64, requires_grad=True, device=device)
        self.s0 = wp.array(np.array([1.0, 2.0, 3.0]), dtype=wp.float64, device=device)
        self.params = {"x": self.x}

    def _zeros(self, rg):
        return wp.zeros(3, dtype=wp.float64, requires_grad=rg, device=self.device)

    def objective(self):
        s1, s2, out = self._zeros(False), self._zeros(False), wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(step, dim=3, inputs=[self.x, self.s0, s1], device=self.device)
        wp.launch(step, dim=3, inputs=[self.x, s1, s2], device=self.device)
        wp.launch(energy, dim=3, inputs=[s2, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        s1, s1b, s2 = self._zeros(True), self._zeros(True), self._zeros(True)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        t1 = wp.Tape()
        with t1:
            wp.launch(step, dim=3, inputs=[self.x, self.s0, s1], device=self.device)
        wp.copy(s1b, s1)
        t2 = wp.Tape()
        with t2:
            wp.launch(step, dim=3, inputs=[self.x, s1b, s2], device=self.device)
            wp.launch(energy, dim=3, inputs=[s2, out], device=self.device)
        t2.backward(out)
        g = self.x.grad.numpy().copy()
        t1.zero()
        t2.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
