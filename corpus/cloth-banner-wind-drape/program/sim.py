import numpy as np
import warp as wp


@wp.kernel
def spring_forces(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    pairs: wp.array(dtype=wp.int32, ndim=2),
    rest: wp.array(dtype=wp.float64),
    ke: wp.float64,
    kd: wp.float64,
    f: wp.array(dtype=wp.vec3d),
):
    s = wp.tid()
    i = pairs[s, 0]
    j = pairs[s, 1]
    d = x[j] - x[i]
    l = wp.length(d)
    n = d / l
    rel = wp.dot(v[j] - v[i], n)
    fs = (ke * (l - rest[s]) + kd * rel) * n
    wp.atomic_add(f, i, fs)
    wp.atomic_sub(f, j, fs)


@wp.kernel
def advance(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    f: wp.array(dtype=wp.vec3d),
    wind: wp.array(dtype=wp.vec3d),
    inv_mass: wp.array(dtype=wp.float64),
    gravity: wp.vec3d,
    drag: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec3d),
    v_out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    w = inv_mass[i]
    a = (f[i] + wind[i] - drag * v[i]) * w
    if w > wp.float64(0.0):
        a = a + gravity
    vn = v[i] + dt * a
    x_out[i] = x[i] + dt * vn
    v_out[i] = vn


@wp.kernel
def drape_error(
    x: wp.array(dtype=wp.vec3d),
    target: wp.array(dtype=wp.vec3d),
    scale: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(out, 0, scale * wp.dot(d, d))


def grid_cloth(nx, ny, spacing):
    pos = np.zeros((nx * ny, 3))
    for r in range(ny):
        for c in range(nx):
            pos[r * nx + c] = (c * spacing, 0.0, -r * spacing)
    edges = []
    for r in range(ny):
        for c in range(nx):
            k = r * nx + c
            if c + 1 < nx:
                edges.append((k, k + 1))
            if r + 1 < ny:
                edges.append((k, k + nx))
            if c + 1 < nx and r + 1 < ny:
                edges.append((k, k + nx + 1))
                edges.append((k + 1, k + nx))
    edges = np.array(edges, dtype=np.int32)
    rest = np.linalg.norm(pos[edges[:, 1]] - pos[edges[:, 0]], axis=1)
    return pos, edges, rest


class Banner:
    def __init__(self, nx=5, ny=5, steps=80, dt=2.5e-4, ke=2.0e4, kd=2.0, mass=0.01, device="cpu"):
        self.device = device
        self.steps = steps
        self.dt = dt
        self.ke = ke
        self.kd = kd
        pos, edges, rest = grid_cloth(nx, ny, 0.1)
        self.n = len(pos)
        inv = np.full(self.n, 1.0 / mass)
        inv[:nx] = 0.0
        self.x0 = wp.array(pos, dtype=wp.vec3d, device=device)
        self.v0 = wp.zeros(self.n, dtype=wp.vec3d, device=device)
        self.pairs = wp.array(edges, dtype=wp.int32, device=device)
        self.rest = wp.array(rest, dtype=wp.float64, device=device)
        self.inv_mass = wp.array(inv, dtype=wp.float64, device=device)
        self.gravity = wp.vec3d(0.0, 0.0, -9.81)

    def rollout(self, wind):
        x, v = self.x0, self.v0
        for _ in range(self.steps):
            f = wp.zeros(self.n, dtype=wp.vec3d, device=self.device, requires_grad=True)
            wp.launch(spring_forces, dim=self.pairs.shape[0],
                      inputs=[x, v, self.pairs, self.rest, wp.float64(self.ke), wp.float64(self.kd)],
                      outputs=[f], device=self.device)
            xn = wp.empty_like(x, requires_grad=True)
            vn = wp.empty_like(v, requires_grad=True)
            wp.launch(advance, dim=self.n,
                      inputs=[x, v, f, wind, self.inv_mass, self.gravity, wp.float64(0.05), wp.float64(self.dt)],
                      outputs=[xn, vn], device=self.device)
            x, v = xn, vn
        return x

    def loss(self, wind, target):
        x = self.rollout(wind)
        out = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(drape_error, dim=self.n, inputs=[x, target, wp.float64(1.0 / self.n)],
                  outputs=[out], device=self.device)
        return out
