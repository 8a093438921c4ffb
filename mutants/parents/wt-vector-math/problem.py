import numpy as np
import warp as wp


@wp.kernel
def vector_terms(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    u = wp.vec3d(a[3 * i], a[3 * i + 1], a[3 * i + 2])
    v = wp.vec3d(b[3 * i] * a[3 * i], b[3 * i + 1], b[3 * i + 2])
    c = wp.cross(u, v)
    n = wp.normalize(u)
    out[i] = wp.dot(c, c) + wp.length(v) * wp.dot(n, v)


@wp.kernel
def reduce(out: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, out[i])


class VectorMath:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(3)
        self.a = wp.array(rng.normal(size=3 * n), dtype=wp.float64, device=device, requires_grad=True)
        self.b = wp.array(rng.normal(size=3 * n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"a": self.a, "b": self.b}

    def forward(self):
        out = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(vector_terms, dim=self.n, inputs=[self.a, self.b], outputs=[out], device=self.device)
        wp.launch(reduce, dim=self.n, inputs=[out], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return VectorMath(device, 64 if scale == "production" else 3)
