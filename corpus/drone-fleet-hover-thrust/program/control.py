import numpy as np
import warp as wp

from plant import Fleet


@wp.kernel
def adam_update(
    x: wp.array2d(dtype=float),
    g: wp.array2d(dtype=float),
    m: wp.array2d(dtype=float),
    v: wp.array2d(dtype=float),
    lr: float,
    b1: float,
    b2: float,
    c1: float,
    c2: float,
):
    i, j = wp.tid()
    m[i, j] = b1 * m[i, j] + (1.0 - b1) * g[i, j]
    v[i, j] = b2 * v[i, j] + (1.0 - b2) * g[i, j] * g[i, j]
    x[i, j] = x[i, j] - lr * (m[i, j] / c1) / (wp.sqrt(v[i, j] / c2) + 1.0e-8)


class HoverPlanner:
    def __init__(self, n_drones=8, horizon=40, seed=3, device=None):
        rng = np.random.default_rng(seed)
        self.device = device
        masses = 0.8 + 0.4 * rng.random(n_drones)
        self.fleet = Fleet(masses, horizon, device=device)
        t = np.arange(1, horizon + 1) * self.fleet.dt
        self.ref = wp.array(1.0 - np.exp(-t), dtype=float, device=device)
        boost = horizon // 5
        cut = horizon - horizon // 8
        u0 = 0.6 + 0.8 * rng.random((n_drones, horizon))
        u0[:, :boost] = 2.4 + 0.2 * rng.random((n_drones, boost))
        u0[:, cut:] = -0.3 + 0.1 * rng.random((n_drones, horizon - cut))
        self.u = wp.array(u0.astype(np.float32), dtype=float, device=device, requires_grad=True)
        self.m = wp.zeros_like(self.u, requires_grad=False)
        self.v = wp.zeros_like(self.u, requires_grad=False)
        self.k = 0

    def loss(self):
        return float(self.fleet.cost(self.u, self.ref).numpy()[0])

    def compute_gradient(self):
        tape = wp.Tape()
        with tape:
            c = self.fleet.cost(self.u, self.ref)
        tape.backward(c)
        g = wp.clone(self.u.grad)
        tape.zero()
        return float(c.numpy()[0]), g

    def apply(self, g, lr=0.02, b1=0.9, b2=0.999):
        self.k += 1
        wp.launch(adam_update, dim=self.u.shape,
                  inputs=[self.u, g, self.m, self.v, lr, b1, b2, 1.0 - b1 ** self.k, 1.0 - b2 ** self.k],
                  device=self.device)

    def optimise(self, iterations, report=None):
        out = []
        for i in range(iterations):
            c, g = self.compute_gradient()
            self.apply(g)
            out.append(c)
            if report:
                report(i, c)
        return out
