import numpy as np
import warp as wp


@wp.kernel
def pair_energy(p: wp.array(dtype=wp.vec2d), q: wp.array(dtype=wp.vec2d), w: wp.array(dtype=wp.float64), e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = p[i] - q[i]
    r = wp.sqrt(wp.dot(d, d) + wp.float64(1.0e-4))
    s = w[i] * r / (r + wp.float64(1.0e-6))
    g = wp.where(r > wp.float64(0.5), w[i] / wp.max(r, wp.float64(1.0e-9)), w[i] * r)
    wp.atomic_add(e, 0, s * s + g)


class PairDistance:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(5)
        pts = rng.normal(size=(n, 2))
        self.q = wp.array(pts, dtype=wp.vec2d, device=device)
        self.p = wp.array(pts + np.where(np.arange(n)[:, None] == 0, 0.0, 0.3), dtype=wp.vec2d, device=device, requires_grad=True)
        self.w = wp.array(np.linspace(1.0, 2.0, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"p": self.p, "w": self.w}

    def forward(self):
        e = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(pair_energy, dim=self.n, inputs=[self.p, self.q, self.w], outputs=[e], device=self.device)
        return e

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            e = self.forward()
        tape.backward(e)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return PairDistance(device, 64 if scale == "production" else 4)
