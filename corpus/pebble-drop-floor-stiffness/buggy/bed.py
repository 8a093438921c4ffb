import numpy as np
import warp as wp

from contact import floor_force


@wp.kernel
def substep(
    y: wp.array(dtype=wp.float64),
    vy: wp.array(dtype=wp.float64),
    log_k: wp.array(dtype=wp.float64),
    radius: wp.array(dtype=wp.float64),
    mass: wp.array(dtype=wp.float64),
    damping: wp.float64,
    g: wp.float64,
    dt: wp.float64,
    y_new: wp.array(dtype=wp.float64),
    vy_new: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    f = floor_force(y[i], vy[i], radius[i], wp.exp(log_k[i]), damping) - mass[i] * g
    v = vy[i] + dt * f / mass[i]
    vy_new[i] = v
    y_new[i] = y[i] + dt * v


@wp.kernel
def height_misfit(
    y: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    scale: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = (y[i] - measured[i]) * scale
    wp.atomic_add(out, 0, r * r)


class PebbleBed:
    def __init__(self, n, frames, dt, device, seed=3):
        rng = np.random.default_rng(seed)
        self.n, self.frames, self.dt, self.device = n, frames, dt, device
        self.radius = wp.array(rng.uniform(0.03, 0.06, n), dtype=wp.float64, device=device)
        self.mass = wp.array(rng.uniform(0.5, 2.0, n), dtype=wp.float64, device=device)
        self.y0 = wp.array(self.radius.numpy() + rng.uniform(0.005, 0.12, n), dtype=wp.float64, device=device)
        self.v0 = wp.zeros(n, dtype=wp.float64, device=device)
        self.measured = wp.array(rng.uniform(0.0, 0.1, n), dtype=wp.float64, device=device)
        self.damping = wp.float64(0.8)
        self.g = wp.float64(9.81)
        self.ys = [self.y0] + [wp.zeros(n, dtype=wp.float64, device=device, requires_grad=True) for _ in range(frames)]
        self.vs = [self.v0] + [wp.zeros(n, dtype=wp.float64, device=device, requires_grad=True) for _ in range(frames)]
        self.misfit = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def simulate(self, log_k):
        for t in range(self.frames):
            wp.launch(
                substep,
                dim=self.n,
                inputs=[self.ys[t], self.vs[t], log_k, self.radius, self.mass, self.damping, self.g, wp.float64(self.dt)],
                outputs=[self.ys[t + 1], self.vs[t + 1]],
                device=self.device,
            )
        self.misfit.zero_()
        wp.launch(
            height_misfit,
            dim=self.n,
            inputs=[self.ys[-1], self.measured, wp.float64(10.0)],
            outputs=[self.misfit],
            device=self.device,
        )
        return self.misfit
