import numpy as np
import warp as wp


@wp.kernel
def advance(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    drag: wp.array(dtype=wp.float64),
    gravity: wp.vec3d,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec3d),
    v_out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    vi = v[i]
    speed = wp.sqrt(wp.dot(vi, vi))
    acc = gravity - drag[i] * speed * vi
    vn = vi + dt * acc
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def landing_error(
    x: wp.array(dtype=wp.vec3d),
    target: wp.array(dtype=wp.vec3d),
    weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, weight * wp.dot(d, d))


class Spray:
    def __init__(self, n_drops, steps, dt=0.02, seed=7, device="cpu"):
        rng = np.random.default_rng(seed)
        self.n = n_drops
        self.steps = steps
        self.dt = dt
        self.device = device
        nozzle = np.zeros((n_drops, 3))
        nozzle[:, 0] = rng.uniform(-0.05, 0.05, n_drops)
        nozzle[:, 1] = 1.0
        nozzle[:, 2] = rng.uniform(-0.05, 0.05, n_drops)
        goal = np.zeros((n_drops, 3))
        ang = rng.uniform(0.0, 2.0 * np.pi, n_drops)
        rad = rng.uniform(0.3, 0.8, n_drops)
        goal[:, 0] = rad * np.cos(ang)
        goal[:, 1] = rng.uniform(0.4, 0.9, n_drops)
        goal[:, 2] = rad * np.sin(ang)
        self.x0 = wp.array(nozzle, dtype=wp.vec3d, device=device)
        self.target = wp.array(goal, dtype=wp.vec3d, device=device)
        self.drag = wp.array(rng.uniform(0.2, 0.6, n_drops), dtype=wp.float64, device=device)
        self.gravity = wp.vec3d(0.0, -9.81, 0.0)
        self.xs = [wp.zeros(n_drops, dtype=wp.vec3d, device=device, requires_grad=True) for _ in range(steps)]
        self.vs = [wp.zeros(n_drops, dtype=wp.vec3d, device=device, requires_grad=True) for _ in range(steps)]
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def run(self, v_launch):
        x, v = self.x0, v_launch
        for t in range(self.steps):
            wp.launch(
                advance,
                dim=self.n,
                inputs=[x, v, self.drag, self.gravity, wp.float64(self.dt)],
                outputs=[self.xs[t], self.vs[t]],
                device=self.device,
            )
            x, v = self.xs[t], self.vs[t]
        self.loss.zero_()
        wp.launch(
            landing_error,
            dim=self.n,
            inputs=[x, self.target, wp.float64(1.0 / self.n)],
            outputs=[self.loss],
            device=self.device,
        )
        return self.loss

    def final_positions(self):
        return self.xs[-1].numpy()
