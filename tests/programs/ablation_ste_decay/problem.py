
import numpy as np
import warp as wp

@wp.func
def binarize(x: float):
    return wp.sign(x)


@wp.func_grad(binarize)
def adj_binarize(x: float, adj_ret: float):
    if wp.abs(x) <= 1.0:
        wp.adjoint[x] += adj_ret

@wp.kernel
def square(w: wp.array(dtype=float), sq: wp.array(dtype=float)):
    i = wp.tid()
    sq[i] = w[i] * w[i]


@wp.kernel
def loss_kernel(w: wp.array(dtype=float), sq: wp.array(dtype=float), a: wp.array(dtype=float),
                t: wp.array(dtype=float), lam: float, out: wp.array(dtype=float)):
    i = wp.tid()
    r = binarize(w[i]) * a[i] - t[i]
    wp.atomic_add(out, 0, r * r + lam * sq[i])


class Problem:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(3)
        n = 16
        w = rng.uniform(0.2, 0.9, n) * rng.choice([-1.0, 1.0], n)
        self.w = wp.array(w, dtype=float, requires_grad=True, device=device)
        self.a = wp.array(rng.uniform(0.5, 1.5, n), dtype=float, device=device)
        self.t = wp.array(rng.uniform(-1.0, 1.0, n), dtype=float, device=device)
        self.params = {"w": self.w}

    def forward(self):
        sq = wp.zeros(self.w.shape[0], dtype=float, requires_grad=True, device=self.device)
        out = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        wp.launch(square, dim=self.w.shape[0], inputs=[self.w], outputs=[sq], device=self.device)
        wp.launch(loss_kernel, dim=self.w.shape[0], inputs=[self.w, sq, self.a, self.t, 0.5], outputs=[out],
                  device=self.device)
        return out

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self.forward()
        tape.backward(out)
        g = {"w": self.w.grad.numpy().copy()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device)
