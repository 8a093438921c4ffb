import warp as wp


@wp.kernel
def burgers_step(
    u: wp.array(dtype=wp.float64),
    forcing: wp.array(dtype=wp.float64),
    nu: wp.float64,
    dt: wp.float64,
    dx: wp.float64,
    u_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = u.shape[0]
    ul = u[(i + n - 1) % n]
    ur = u[(i + 1) % n]
    uc = u[i]
    adv = uc * (ur - ul) / (wp.float64(2.0) * dx)
    dif = nu * (ur - wp.float64(2.0) * uc + ul) / (dx * dx)
    u_next[i] = uc + dt * (dif - adv + forcing[i])


@wp.kernel
def probe_misfit(
    u: wp.array(dtype=wp.float64),
    probes: wp.array(dtype=wp.int32),
    obs: wp.array(dtype=wp.float64),
    weight: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    d = u[probes[k]] - obs[k]
    wp.atomic_add(out, 0, weight * d * d)


class Channel:
    def __init__(self, cells, nu=0.01, dt=0.005, device=None):
        self.cells = cells
        self.nu = nu
        self.dt = dt
        self.dx = 1.0 / cells
        self.device = device

    def advance(self, u, forcing, steps):
        for _ in range(steps):
            nxt = wp.empty_like(u, requires_grad=True)
            wp.launch(burgers_step, dim=self.cells,
                      inputs=[u, forcing, wp.float64(self.nu), wp.float64(self.dt), wp.float64(self.dx)],
                      outputs=[nxt], device=self.device)
            u = nxt
        return u

    def misfit(self, u, probes, obs):
        out = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(probe_misfit, dim=probes.shape[0], inputs=[u, probes, obs, wp.float64(1.0 / probes.shape[0])],
                  outputs=[out], device=self.device)
        return out
