import numpy as np
import warp as wp

PLIES = 3


@wp.kernel
def ply_direction(angle: wp.array(dtype=wp.float64), direction: wp.array(dtype=wp.vec2d)):
    j = wp.tid()
    direction[j] = wp.vec2d(wp.cos(angle[j]), wp.sin(angle[j]))


@wp.kernel
def laminate_tensor(
    thickness: wp.array(dtype=wp.float64),
    direction: wp.array(dtype=wp.vec2d),
    k_fibre: wp.float64,
    k_matrix: wp.float64,
    tensor: wp.array(dtype=wp.mat22d),
):
    i = wp.tid()
    k = wp.mat22d()
    for p in range(PLIES):
        t = thickness[i * PLIES + p]
        d = direction[i * PLIES + p]
        c = d[0]
        s = d[1]
        k[0, 0] = k[0, 0] + t * (k_fibre * c * c + k_matrix * s * s)
        k[0, 1] = k[0, 1] + t * (k_fibre - k_matrix) * c * s
        k[1, 0] = k[1, 0] + t * (k_fibre - k_matrix) * c * s
        k[1, 1] = k[1, 1] + t * (k_fibre * s * s + k_matrix * c * c)
    tensor[i] = k


@wp.kernel
def tensor_misfit(
    tensor: wp.array(dtype=wp.mat22d),
    measured: wp.array(dtype=wp.mat22d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = tensor[i] - measured[i]
    wp.atomic_add(loss, 0, wp.ddot(d, d))


class LayupFit:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.k_fibre = 5.0
        self.k_matrix = 0.4
        rng = np.random.default_rng(9)
        true_t = rng.uniform(0.5, 1.5, n * PLIES)
        true_a = np.tile(np.deg2rad([0.0, 45.0, 90.0]), n) + rng.uniform(-0.3, 0.3, n * PLIES)
        self.measured = wp.array(self._tensor_numpy(true_t, true_a) + rng.normal(0.0, 0.05, (n, 2, 2)), dtype=wp.mat22d, device=device)
        self.thickness = wp.array(np.full(n * PLIES, 1.0), dtype=wp.float64, requires_grad=True, device=device)
        self.angle = wp.array(np.tile(np.deg2rad([0.0, 45.0, 90.0]), n), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"thickness": self.thickness, "angle": self.angle}

    def _tensor_numpy(self, t, a):
        c, s = np.cos(a), np.sin(a)
        out = np.zeros((self.n, 2, 2))
        kf, km = self.k_fibre, self.k_matrix
        for i in range(self.n):
            for p in range(PLIES):
                j = i * PLIES + p
                out[i, 0, 0] += t[j] * (kf * c[j] ** 2 + km * s[j] ** 2)
                out[i, 0, 1] += t[j] * (kf - km) * c[j] * s[j]
                out[i, 1, 0] += t[j] * (kf - km) * c[j] * s[j]
                out[i, 1, 1] += t[j] * (kf * s[j] ** 2 + km * c[j] ** 2)
        return out

    def forward(self):
        m = self.n * PLIES
        direction = wp.zeros(m, dtype=wp.vec2d, device=self.device)
        wp.launch(ply_direction, dim=m, inputs=[self.angle], outputs=[direction], device=self.device)
        tensor = wp.zeros(self.n, dtype=wp.mat22d, requires_grad=True, device=self.device)
        wp.launch(
            laminate_tensor,
            dim=self.n,
            inputs=[self.thickness, direction, wp.float64(self.k_fibre), wp.float64(self.k_matrix)],
            outputs=[tensor],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(tensor_misfit, dim=self.n, inputs=[tensor, self.measured], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def train(self, iterations, lr=0.005):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return LayupFit(device, n=128)
    return LayupFit(device, n=4)
