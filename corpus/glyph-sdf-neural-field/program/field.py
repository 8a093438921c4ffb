import numpy as np
import warp as wp

from layers import MLP


@wp.kernel
def mse(pred: wp.array2d(dtype=float), target: wp.array(dtype=float), scale: float, loss: wp.array(dtype=float)):
    n = wp.tid()
    e = pred[n, 0] - target[n]
    wp.atomic_add(loss, 0, scale * e * e)


def glyph_sdf(p):
    d1 = np.linalg.norm(p - np.array([-0.3, 0.0]), axis=1) - 0.35
    d2 = np.linalg.norm(p - np.array([0.35, 0.1]), axis=1) - 0.25
    q = np.abs(p - np.array([0.0, -0.45])) - np.array([0.6, 0.08])
    d3 = np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(np.max(q, axis=1), 0.0)
    return np.minimum(np.minimum(d1, d2), d3)


def sample_points(n, seed=1):
    rng = np.random.default_rng(seed)
    p = rng.uniform(-1.0, 1.0, (n, 2))
    return p.astype(np.float32), glyph_sdf(p).astype(np.float32)


class NeuralField:
    def __init__(self, hidden=32, depth=2, n_points=256, seed=0, device="cpu"):
        self.device = device
        self.net = MLP([2] + [hidden] * depth + [1], seed=seed, device=device)
        pts, sdf = sample_points(n_points, seed=seed + 1)
        self.points = wp.array(pts, dtype=float, device=device)
        self.sdf = wp.array(sdf, dtype=float, device=device)
        self.loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)

    def forward(self):
        self.loss.zero_()
        pred = self.net(self.points)
        wp.launch(mse, dim=self.points.shape[0], inputs=[pred, self.sdf, 1.0 / self.points.shape[0]], outputs=[self.loss], device=self.device)
        return self.loss
