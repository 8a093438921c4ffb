import numpy as np
import warp as wp


@wp.kernel
def spring_forces(
    x: wp.array(dtype=wp.vec2d),
    stiffness: wp.array(dtype=wp.float64),
    rest: wp.float64,
    f: wp.array(dtype=wp.vec2d),
):
    s = wp.tid()
    d = x[s + 1] - x[s]
    length = wp.length(d)
    fs = stiffness[s] * (length - rest) * d / length
    wp.atomic_add(f, s, fs)
    wp.atomic_sub(f, s + 1, fs)


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.vec2d),
    v: wp.array(dtype=wp.vec2d),
    f: wp.array(dtype=wp.vec2d),
    mass: wp.float64,
    damping: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec2d),
    v_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    if i == 0:
        x_out[i] = x[i]
        v_out[i] = v[i]
        return
    g = wp.vec2d(wp.float64(0.0), wp.float64(-9.81))
    vn = (v[i] + dt * (f[i] / mass + g)) * damping
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


class Cord:
    def __init__(self, segments, substeps, dt, seed):
        rng = np.random.default_rng(seed)
        self.n = segments + 1
        self.substeps = substeps
        self.dt = dt
        self.rest = 1.0 / segments
        x0 = np.stack([np.linspace(0.0, 1.3, self.n), np.zeros(self.n)], axis=1)
        self.x0 = wp.array(x0, dtype=wp.vec2d, requires_grad=True)
        self.v0 = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True)
        self.stiffness = wp.array(np.full(segments, 300.0), dtype=wp.float64, requires_grad=True)
        self.forces = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True)
        self.true_stiffness = rng.uniform(200.0, 400.0, segments)

    def simulate(self, stiffness):
        x, v = self.x0, self.v0
        for _ in range(self.substeps):
            self.forces = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True)
            wp.launch(spring_forces, dim=self.n - 1, inputs=[x, stiffness, wp.float64(self.rest)], outputs=[self.forces])
            x_next = wp.zeros_like(x)
            v_next = wp.zeros_like(v)
            wp.launch(integrate, dim=self.n, inputs=[x, v, self.forces, wp.float64(0.05), wp.float64(0.995), wp.float64(self.dt)], outputs=[x_next, v_next])
            x, v = x_next, v_next
        return x
