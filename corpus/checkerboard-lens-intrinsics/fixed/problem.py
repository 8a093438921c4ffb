import numpy as np
import warp as wp

from lens import Camera


@wp.kernel
def reprojection_error(
    pixels: wp.array(dtype=wp.vec2d),
    observed: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pixels[i] - observed[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def rotation(rx, ry, rz):
    cx, sx = np.cos(rx), np.sin(rx)
    cy, sy = np.cos(ry), np.sin(ry)
    cz, sz = np.cos(rz), np.sin(rz)
    mx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    my = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    mz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return mz @ my @ mx


class LensCalibration:
    def __init__(self, device, board_cols, board_rows, views):
        self.device = device
        square = 0.04
        gx, gy = np.meshgrid(np.arange(board_cols), np.arange(board_rows))
        pts = np.stack([gx.ravel() * square, gy.ravel() * square, np.zeros(gx.size)], axis=1)
        pts[:, 0] -= pts[:, 0].mean()
        pts[:, 1] -= pts[:, 1].mean()
        self.num_points = pts.shape[0]
        self.board = wp.array(pts, dtype=wp.vec3d, device=device)
        rng = np.random.default_rng(17)
        self.poses = []
        for _ in range(views):
            r = rotation(*rng.uniform(-0.35, 0.35, 3))
            t = np.array([rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), rng.uniform(0.35, 0.5)])
            self.poses.append((wp.mat33d(*r.ravel().tolist()), wp.vec3d(*t.tolist())))
        true_cam = Camera(
            wp.array([820.0, 322.0, 236.0], dtype=wp.float64, device=device),
            wp.array([-0.21, 0.08], dtype=wp.float64, device=device),
            self.num_points,
            device,
        )
        self.observed = []
        for rot, trans in self.poses:
            px = true_cam.project(self.board, rot, trans).numpy()
            px = px + 0.3 * rng.standard_normal(px.shape)
            self.observed.append(wp.array(px, dtype=wp.vec2d, device=device))
        self.intrinsics = wp.array([800.0, 320.0, 240.0], dtype=wp.float64, requires_grad=True, device=device)
        self.distortion = wp.array([-0.15, 0.02], dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"intrinsics": self.intrinsics, "distortion": self.distortion}

    def forward(self):
        cam = Camera(self.intrinsics, self.distortion, self.num_points, self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for (rot, trans), obs in zip(self.poses, self.observed):
            px = cam.project(self.board, rot, trans)
            wp.launch(reprojection_error, dim=self.num_points, inputs=[px, obs], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        out = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return out


def make_problem(device, scale="small"):
    if scale == "production":
        return LensCalibration(device, board_cols=9, board_rows=6, views=15)
    return LensCalibration(device, board_cols=4, board_rows=3, views=3)
