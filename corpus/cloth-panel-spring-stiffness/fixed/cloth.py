import numpy as np
import warp as wp


@wp.kernel
def spring_forces(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    springs: wp.array(dtype=wp.int32),
    rest: wp.array(dtype=wp.float64),
    stiffness: wp.array(dtype=wp.float64),
    damping: wp.float64,
    f: wp.array(dtype=wp.vec3d),
):
    s = wp.tid()
    i = springs[2 * s]
    j = springs[2 * s + 1]
    d = x[j] - x[i]
    l = wp.length(d)
    n = d / l
    vrel = wp.dot(v[j] - v[i], n)
    fs = (stiffness[s] * (l - rest[s]) + damping * vrel) * n
    wp.atomic_add(f, i, fs)
    wp.atomic_sub(f, j, fs)


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    f: wp.array(dtype=wp.vec3d),
    inv_mass: wp.array(dtype=wp.float64),
    gravity: wp.vec3d,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec3d),
    v_out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    w = inv_mass[i]
    a = f[i] * w
    if w > wp.float64(0.0):
        a = a + gravity
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


class ClothPanel:
    def __init__(self, rows, cols, spacing, device):
        self.device = device
        self.rows = rows
        self.cols = cols
        pos = []
        for r in range(rows):
            for c in range(cols):
                pos.append([c * spacing, 0.0, -r * spacing])
        self.rest_positions = np.array(pos, dtype=np.float64)
        edges = []
        for r in range(rows):
            for c in range(cols):
                k = r * cols + c
                if c + 1 < cols:
                    edges.append((k, k + 1))
                if r + 1 < rows:
                    edges.append((k, k + cols))
        self.edges = np.array(edges, dtype=np.int32)
        self.num_springs = len(edges)
        rest = np.linalg.norm(self.rest_positions[self.edges[:, 1]] - self.rest_positions[self.edges[:, 0]], axis=1)
        inv_mass = np.full(rows * cols, 1.0 / 0.05)
        inv_mass[:cols] = 0.0
        self.springs = wp.array(self.edges.reshape(-1), dtype=wp.int32, device=device)
        self.rest = wp.array(rest, dtype=wp.float64, device=device)
        self.inv_mass = wp.array(inv_mass, dtype=wp.float64, device=device)
        self.damping = 0.05
        self.gravity = wp.vec3d(0.0, 0.0, -9.81)
        self.dt = 1.0 / 240.0

    def simulate(self, stiffness, x, v, steps):
        n = x.shape[0]
        for _ in range(steps):
            x_next = wp.zeros(n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            v_next = wp.zeros(n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            f = wp.zeros(n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            wp.launch(
                spring_forces,
                dim=self.num_springs,
                inputs=[x, v, self.springs, self.rest, stiffness, wp.float64(self.damping)],
                outputs=[f],
                device=self.device,
            )
            wp.launch(
                integrate,
                dim=n,
                inputs=[x, v, f, self.inv_mass, self.gravity, wp.float64(self.dt)],
                outputs=[x_next, v_next],
                device=self.device,
            )
            x = x_next
            v = v_next
        return x
