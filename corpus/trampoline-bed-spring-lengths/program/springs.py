import numpy as np
import warp as wp


@wp.kernel
def spring_forces(
    x: wp.array(dtype=wp.vec2d),
    ends: wp.array(dtype=wp.vec2i),
    stiffness: wp.float64,
    rest: wp.array(dtype=wp.float64),
    forces: wp.array(dtype=wp.vec2d),
):
    s = wp.tid()
    a = ends[s][0]
    b = ends[s][1]
    d = x[b] - x[a]
    length = wp.length(d)
    f = stiffness * (length - rest[s]) * d / length
    wp.atomic_add(forces, a, f)
    wp.atomic_sub(forces, b, f)


@wp.kernel
def load_misfit(forces: wp.array(dtype=wp.vec2d), loads: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    r = forces[i] + loads[i]
    wp.atomic_add(loss, 0, wp.dot(r, r))


class SpringBed:
    def __init__(self, nx, device, rng):
        self.device = device
        xs, ys = np.meshgrid(np.linspace(0.0, 1.0, nx), np.linspace(0.0, 0.4, 3), indexing="ij")
        pts = np.stack([xs.ravel(), ys.ravel()], axis=1)
        pts[:, 1] += 0.02 * np.sin(np.pi * pts[:, 0])
        idx = np.arange(nx * 3).reshape(nx, 3)
        ends = [(idx[i, j], idx[i + 1, j]) for i in range(nx - 1) for j in range(3)]
        ends += [(idx[i, j], idx[i, j + 1]) for i in range(nx) for j in range(2)]
        self.n_nodes = pts.shape[0]
        self.n_springs = len(ends)
        self.x = wp.array(pts, dtype=wp.vec2d, device=device)
        self.ends = wp.array(np.array(ends, dtype=np.int32), dtype=wp.vec2i, device=device)
        self.stiffness = 40.0
        self.loads = wp.array(rng.normal(0.0, 0.3, size=(self.n_nodes, 2)), dtype=wp.vec2d, device=device)
        seg = pts[np.array(ends)[:, 1]] - pts[np.array(ends)[:, 0]]
        self.drawn_lengths = np.linalg.norm(seg, axis=1)
        self.forces = wp.zeros(self.n_nodes, dtype=wp.vec2d, requires_grad=True, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def evaluate(self, rest):
        self.forces.zero_()
        self.loss.zero_()
        wp.launch(spring_forces, dim=self.n_springs, inputs=[self.x, self.ends, wp.float64(self.stiffness), rest],
                  outputs=[self.forces], device=self.device)
        wp.launch(load_misfit, dim=self.n_nodes, inputs=[self.forces, self.loads], outputs=[self.loss],
                  device=self.device)
        return self.loss
