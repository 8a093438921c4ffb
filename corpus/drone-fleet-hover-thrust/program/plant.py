import warp as wp

U_MAX = wp.constant(2.0)


@wp.kernel
def step_fleet(
    u: wp.array2d(dtype=float),
    mass: wp.array(dtype=float),
    z: wp.array2d(dtype=float),
    vz: wp.array2d(dtype=float),
    t: int,
    dt: float,
    drag: float,
):
    b = wp.tid()
    thrust = wp.clamp(u[b, t], 0.0, U_MAX)
    acc = thrust / mass[b] - 1.0 - drag * vz[t, b]
    v = vz[t, b] + dt * acc
    vz[t + 1, b] = v
    z[t + 1, b] = z[t, b] + dt * v


@wp.kernel
def tracking_cost(
    z: wp.array2d(dtype=float),
    ref: wp.array(dtype=float),
    u: wp.array2d(dtype=float),
    w_track: float,
    w_effort: float,
    cost: wp.array(dtype=float),
):
    t, b = wp.tid()
    e = z[t + 1, b] - ref[t]
    wp.atomic_add(cost, 0, w_track * e * e + w_effort * u[b, t] * u[b, t])


class Fleet:
    def __init__(self, masses, horizon, dt=0.05, drag=0.3, device=None):
        self.device = device
        self.horizon = horizon
        self.dt = dt
        self.drag = drag
        self.mass = wp.array(masses, dtype=float, device=device)
        self.n = len(masses)

    def rollout(self, u):
        z = wp.zeros((self.horizon + 1, self.n), dtype=float, device=self.device, requires_grad=True)
        vz = wp.zeros((self.horizon + 1, self.n), dtype=float, device=self.device, requires_grad=True)
        for t in range(self.horizon):
            wp.launch(step_fleet, dim=self.n, inputs=[u, self.mass, z, vz, t, self.dt, self.drag], device=self.device)
        return z

    def cost(self, u, ref):
        z = self.rollout(u)
        cost = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)
        scale = 1.0 / (self.n * self.horizon)
        wp.launch(tracking_cost, dim=(self.horizon, self.n), inputs=[z, ref, u, 10.0 * scale, 0.01 * scale],
                  outputs=[cost], device=self.device)
        return cost
