import numpy as np
import warp as wp


@wp.kernel
def spray_deposit(
    points: wp.array(dtype=wp.vec3),
    nozzles: wp.array(dtype=wp.vec3),
    rate: wp.array(dtype=float),
    inv_two_s2: float,
    deposit: wp.array(dtype=float),
):
    j, k = wp.tid()
    d = points[j] - nozzles[k]
    wp.atomic_add(deposit, j, rate[k] * wp.exp(-wp.dot(d, d) * inv_two_s2))


@wp.kernel
def deposit_error(deposit: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    j = wp.tid()
    r = deposit[j] - target[j]
    wp.atomic_add(loss, 0, r * r)


class Canopy:
    def __init__(self, n_points, n_nozzles, rng, device):
        self.device = device
        self.n_points = n_points
        z = np.linspace(0.5, 3.5, n_nozzles)
        nozzles = np.stack([np.full(n_nozzles, 0.0), np.zeros(n_nozzles), z], axis=1)
        pts = np.stack([rng.uniform(0.2, 2.5, n_points), rng.uniform(-1.0, 1.0, n_points),
                        rng.uniform(0.0, 4.0, n_points)], axis=1)
        self.sigma = 0.6
        self.points_np = pts.astype(np.float32)
        self.nozzles_np = nozzles.astype(np.float32)
        d2 = ((pts[:, None, :] - nozzles[None, :, :]) ** 2).sum(axis=2)
        true_rate = 1.0 + rng.normal(0.0, 0.005, n_nozzles)
        readings = np.exp(-d2 / (2.0 * self.sigma**2)) @ true_rate + rng.normal(0.0, 0.8, n_points)
        self.target_np = readings.astype(np.float32)
        self.points = wp.array(self.points_np, dtype=wp.vec3, device=device)
        self.nozzles = wp.array(self.nozzles_np, dtype=wp.vec3, device=device)
        self.target = wp.array(self.target_np, dtype=float, device=device)

    def loss(self, rate):
        deposit = wp.zeros(self.n_points, dtype=float, requires_grad=True, device=self.device)
        out = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        wp.launch(spray_deposit, dim=(self.n_points, self.nozzles.shape[0]),
                  inputs=[self.points, self.nozzles, rate, 1.0 / (2.0 * self.sigma**2)],
                  outputs=[deposit], device=self.device)
        wp.launch(deposit_error, dim=self.n_points, inputs=[deposit, self.target], outputs=[out], device=self.device)
        return out
