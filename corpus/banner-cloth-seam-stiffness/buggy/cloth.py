import numpy as np
import warp as wp


@wp.kernel
def spring_forces(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    springs: wp.array(dtype=wp.vec2i),
    rest: wp.array(dtype=wp.float64),
    log_k: wp.array(dtype=wp.float64),
    damping: wp.float64,
    f: wp.array(dtype=wp.vec3d),
):
    s = wp.tid()
    a = springs[s][0]
    b = springs[s][1]
    d = x[b] - x[a]
    l = wp.length(d)
    n = d / l
    rel = wp.dot(v[b] - v[a], n)
    mag = wp.exp(log_k[s]) * (l - rest[s]) + damping * rel
    wp.atomic_add(f, a, mag * n)
    wp.atomic_sub(f, b, mag * n)


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
    vn = v[i]
    if w > wp.float64(0.0):
        vn = v[i] + dt * (f[i] * w + gravity)
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def pose_error(x: wp.array(dtype=wp.vec3d), target: wp.array(dtype=wp.vec3d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    e = x[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(e, e))


def grid_springs(nx, ny):
    idx = lambda i, j: j * nx + i
    out = []
    for j in range(ny):
        for i in range(nx):
            if i + 1 < nx:
                out.append((idx(i, j), idx(i + 1, j)))
            if j + 1 < ny:
                out.append((idx(i, j), idx(i, j + 1)))
            if i + 1 < nx and j + 1 < ny:
                out.append((idx(i, j), idx(i + 1, j + 1)))
    return np.array(out, dtype=np.int32)


class Banner:
    def __init__(self, nx, ny, steps, dt=0.01, spacing=0.1, device="cpu"):
        self.nx, self.ny, self.steps, self.dt, self.device = nx, ny, steps, dt, device
        n = nx * ny
        self.n = n
        pos = np.zeros((n, 3))
        for j in range(ny):
            for i in range(nx):
                pos[j * nx + i] = (i * spacing, 0.0, -j * spacing * 0.8)
        pairs = grid_springs(nx, ny)
        self.m = len(pairs)
        self.springs = wp.array(pairs, dtype=wp.vec2i, device=device)
        rest = np.linalg.norm(pos[pairs[:, 1]] - pos[pairs[:, 0]], axis=1) / 0.8
        self.rest = wp.array(rest, dtype=wp.float64, device=device)
        inv_mass = np.full(n, 25.0)
        inv_mass[:nx] = 0.0
        self.inv_mass = wp.array(inv_mass, dtype=wp.float64, device=device)
        self.gravity = wp.vec3d(0.0, 0.0, -9.81)
        self.damping = wp.float64(0.05)
        self.x = [wp.array(pos, dtype=wp.vec3d, device=device)]
        self.v = [wp.zeros(n, dtype=wp.vec3d, device=device)]
        for _ in range(steps):
            self.x.append(wp.zeros(n, dtype=wp.vec3d, device=device, requires_grad=True))
            self.v.append(wp.zeros(n, dtype=wp.vec3d, device=device, requires_grad=True))
        self.f = [wp.zeros(n, dtype=wp.vec3d, device=device, requires_grad=True) for _ in range(steps)]
        self.scratch = wp.zeros(n, dtype=wp.vec3d, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        truth = np.log(150.0) + 0.4 * np.sin(np.arange(self.m) * 0.7)
        self.target = wp.zeros(n, dtype=wp.vec3d, device=device)
        self.simulate(wp.array(truth, dtype=wp.float64, device=device))
        wp.copy(self.target, self.x[-1])

    def simulate(self, log_k):
        for t in range(self.steps):
            self.f[t].zero_()
            wp.launch(spring_forces, dim=self.m, inputs=[self.x[t], self.v[t], self.springs, self.rest, log_k, self.damping], outputs=[self.f[t]], device=self.device)
            wp.launch(integrate, dim=self.n, inputs=[self.x[t], self.v[t], self.f[t], self.inv_mass, self.gravity, wp.float64(self.dt)], outputs=[self.x[t + 1], self.v[t + 1]], device=self.device)
        self.loss.zero_()
        wp.launch(pose_error, dim=self.n, inputs=[self.x[-1], self.target], outputs=[self.loss], device=self.device)
        return self.loss

    def settle(self, log_k, frames):
        xl, vl = self.x[-1], self.v[-1]
        for _ in range(frames):
            self.scratch.zero_()
            wp.launch(spring_forces, dim=self.m, inputs=[xl, vl, self.springs, self.rest, log_k, self.damping], outputs=[self.scratch], device=self.device)
            wp.launch(integrate, dim=self.n, inputs=[xl, vl, self.scratch, self.inv_mass, self.gravity, wp.float64(self.dt)], outputs=[xl, vl], device=self.device)
        return xl.numpy().copy()
