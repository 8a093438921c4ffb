import numpy as np
import warp as wp


@wp.kernel
def step(k: wp.array(dtype=wp.float64), z: wp.array2d(dtype=wp.float64), v: wp.array2d(dtype=wp.float64),
         t: int, dt: wp.float64):
    b = wp.tid()
    acc = -k[b] * z[t, b] * z[t, b]
    v[t + 1, b] = v[t, b] + dt * acc
    z[t + 1, b] = z[t, b] + dt * v[t + 1, b]


@wp.kernel
def final_cost(z: wp.array2d(dtype=wp.float64), t: int, out: wp.array(dtype=wp.float64)):
    b = wp.tid()
    wp.atomic_add(out, 0, z[t, b] * z[t, b])


class Problem:
    def __init__(self, device):
        self.device = device
        self.k = wp.array(np.array([0.5, 1.0, 2.0]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"k": self.k}
        self.steps = 6

    def _rollout(self, rg):
        d, n = self.device, self.steps
        z = wp.array(np.ones((n + 1, 3)), dtype=wp.float64, requires_grad=rg, device=d)
        v = wp.zeros((n + 1, 3), dtype=wp.float64, requires_grad=rg, device=d)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=rg, device=d)
        for t in range(n):
            wp.launch(step, dim=3, inputs=[self.k, z, v, t, wp.float64(0.1)], device=d)
        wp.launch(final_cost, dim=3, inputs=[z, n, out], device=d)
        return out

    def objective(self):
        return float(self._rollout(False).numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self._rollout(True)
        tape.backward(out)
        g = self.k.grad.numpy().copy()
        tape.zero()
        return {"k": g}


def make_problem(device, scale="small"):
    return Problem(device)
