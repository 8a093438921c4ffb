import numpy as np
import warp as wp


@wp.kernel
def point_residuals(
    pts: wp.array(dtype=wp.vec3d),
    targets: wp.array(dtype=wp.vec3d),
    offset: wp.array(dtype=wp.float64),
    yaw: wp.array(dtype=wp.float64),
    res: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    p = pts[i]
    c = wp.cos(yaw[0])
    s = wp.sin(yaw[0])
    x = c * p[0] - s * p[1] + offset[0]
    y = s * p[0] + c * p[1] + offset[1]
    z = p[2] + offset[2]
    q = targets[i]
    dx = x - q[0]
    dy = y - q[1]
    dz = z - q[2]
    res[i] = dx * dx + dy * dy + dz * dz


class ScanData:
    def __init__(self, n_points, device, rng):
        self.n = n_points
        self.device = device
        true_offset = np.array([0.42, -0.13, 1.05])
        true_yaw = 0.06
        pts = rng.uniform(-8.0, 8.0, size=(n_points, 3))
        pts[:, 2] = rng.uniform(-0.5, 2.0, size=n_points)
        c, s = np.cos(true_yaw), np.sin(true_yaw)
        tgt = np.stack([c * pts[:, 0] - s * pts[:, 1], s * pts[:, 0] + c * pts[:, 1], pts[:, 2]], axis=1)
        tgt += true_offset + rng.normal(0.0, 0.02, size=tgt.shape)
        self.pts = wp.array(pts, dtype=wp.vec3d, device=device)
        self.targets = wp.array(tgt, dtype=wp.vec3d, device=device)


class MountModel:
    def __init__(self, data, device):
        self.data = data
        self.device = device
        self.offset = wp.array(np.zeros(3), dtype=wp.float64, requires_grad=True, device=device)
        self.yaw = wp.array(np.zeros(1), dtype=wp.float64, requires_grad=True, device=device)

    def residuals(self):
        res = wp.zeros(self.data.n, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            point_residuals,
            dim=self.data.n,
            inputs=[self.data.pts, self.data.targets, self.offset, self.yaw],
            outputs=[res],
            device=self.device,
        )
        return res
