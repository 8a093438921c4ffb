import numpy as np
import warp as wp


@wp.func
def log_volume(J: wp.float64):
    return wp.log(wp.max(J, wp.float64(1.0e-6)))


@wp.func_grad(log_volume)
def adj_log_volume(J: wp.float64, adj_ret: wp.float64):
    wp.adjoint[J] += adj_ret / wp.max(J, wp.float64(1.0e-6))


@wp.kernel
def elastic_energy(
    x: wp.array(dtype=wp.vec2d),
    tris: wp.array(dtype=int, ndim=2),
    rest_inv: wp.array(dtype=wp.mat22d),
    rest_area: wp.array(dtype=wp.float64),
    mu: wp.float64,
    lam: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    e = wp.tid()
    a = x[tris[e, 0]]
    b = x[tris[e, 1]]
    c = x[tris[e, 2]]
    Ds = wp.mat22d(b[0] - a[0], c[0] - a[0], b[1] - a[1], c[1] - a[1])
    F = Ds * rest_inv[e]
    I1 = wp.ddot(F, F)
    J = F[0, 0] * F[1, 1] - F[0, 1] * F[1, 0]
    lj = log_volume(J)
    W = wp.float64(0.5) * mu * (I1 - wp.float64(2.0)) - mu * lj + wp.float64(0.5) * lam * (J - wp.float64(1.0)) * (J - wp.float64(1.0))
    wp.atomic_add(energy, 0, rest_area[e] * W)


@wp.kernel
def support_energy(
    x: wp.array(dtype=wp.vec2d),
    support_index: wp.array(dtype=int),
    support_pos: wp.array(dtype=wp.vec2d),
    k: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    d = x[support_index[j]] - support_pos[j]
    wp.atomic_add(energy, 0, wp.float64(0.5) * k * wp.dot(d, d))


@wp.kernel
def load_potential(
    x: wp.array(dtype=wp.vec2d),
    force: wp.array(dtype=wp.vec2d),
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    wp.atomic_add(energy, 0, -wp.dot(force[i], x[i]))


class Problem:
    def __init__(self, device, scale):
        self.device = device
        m = 1 if scale == "small" else 3
        nv = m + 1
        rest = np.array([[i / m, j / m] for j in range(nv) for i in range(nv)], dtype=np.float64)
        tris = []
        for j in range(m):
            for i in range(m):
                v0 = j * nv + i
                tris.append([v0, v0 + 1, v0 + nv + 1])
                tris.append([v0, v0 + nv + 1, v0 + nv])
        tris = np.array(tris, dtype=np.int32)
        rest_inv = []
        rest_area = []
        for t in tris:
            Dm = np.stack([rest[t[1]] - rest[t[0]], rest[t[2]] - rest[t[0]]], axis=1)
            rest_inv.append(np.linalg.inv(Dm))
            rest_area.append(0.5 * abs(np.linalg.det(Dm)))
        rng = np.random.default_rng(2)
        x = rest * np.array([1.0, 0.9]) + rng.uniform(-0.02, 0.02, size=rest.shape)
        force = np.zeros_like(rest)
        force[-nv:, 1] = -4.0 / nv
        force[-nv:, 0] = rng.uniform(-0.2, 0.2, size=nv)
        support = np.arange(nv)
        self.n_tris = len(tris)
        self.n_verts = len(rest)
        self.mu = 10.0
        self.lam = 40.0
        self.tris = wp.array(tris, dtype=int, device=device)
        self.rest_inv = wp.array(np.array(rest_inv), dtype=wp.mat22d, device=device)
        self.rest_area = wp.array(np.array(rest_area), dtype=wp.float64, device=device)
        self.force = wp.array(force, dtype=wp.vec2d, device=device)
        self.k_support = 1.0e3
        self.support_index = wp.array(support, dtype=int, device=device)
        self.support_pos = wp.array(rest[support], dtype=wp.vec2d, device=device)
        self.params = {"x": wp.array(x, dtype=wp.vec2d, device=device, requires_grad=True)}
        self.energy = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def _forward(self):
        x = self.params["x"]
        self.energy.zero_()
        wp.launch(
            elastic_energy,
            dim=self.n_tris,
            inputs=[x, self.tris, self.rest_inv, self.rest_area, wp.float64(self.mu), wp.float64(self.lam)],
            outputs=[self.energy],
            device=self.device,
        )
        wp.launch(
            support_energy,
            dim=self.support_index.shape[0],
            inputs=[x, self.support_index, self.support_pos, wp.float64(self.k_support)],
            outputs=[self.energy],
            device=self.device,
        )
        wp.launch(load_potential, dim=self.n_verts, inputs=[x, self.force], outputs=[self.energy], device=self.device)

    def objective(self):
        self._forward()
        return float(self.energy.numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            self._forward()
        tape.backward(self.energy)
        g = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device, scale)
