import numpy as np
import warp as wp


@wp.func
def rates(s: wp.vec3d, sigma: wp.float64, rho: wp.float64, beta: wp.float64):
    return wp.vec3d(sigma * (s[1] - s[0]), s[0] * (rho - s[2]) - s[1], s[0] * s[1] - beta * s[2])


@wp.kernel
def rk4_step(
    traj: wp.array2d(dtype=wp.vec3d),
    k: int,
    dt: wp.float64,
    sigma: wp.float64,
    rho: wp.float64,
    beta: wp.float64,
):
    m = wp.tid()
    s = traj[k, m]
    half = wp.float64(0.5) * dt
    k1 = rates(s, sigma, rho, beta)
    k2 = rates(s + half * k1, sigma, rho, beta)
    k3 = rates(s + half * k2, sigma, rho, beta)
    k4 = rates(s + dt * k3, sigma, rho, beta)
    traj[k + 1, m] = s + (dt / wp.float64(6.0)) * (k1 + wp.float64(2.0) * k2 + wp.float64(2.0) * k3 + k4)


@wp.kernel
def set_start(x0: wp.array(dtype=wp.vec3d), traj: wp.array2d(dtype=wp.vec3d)):
    m = wp.tid()
    traj[0, m] = x0[m]


@wp.kernel
def misfit(
    traj: wp.array2d(dtype=wp.vec3d),
    obs: wp.array2d(dtype=wp.float64),
    every: int,
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    j, m = wp.tid()
    d = traj[(j + 1) * every, m][0] - obs[j, m]
    wp.atomic_add(loss, 0, scale * d * d)


SIGMA, RHO, BETA = 10.0, 28.0, 8.0 / 3.0


def rk4_np(s, dt):
    def f(s):
        x, y, z = s[..., 0], s[..., 1], s[..., 2]
        return np.stack([SIGMA * (y - x), x * (RHO - z) - y, x * y - BETA * z], axis=-1)

    k1 = f(s)
    k2 = f(s + 0.5 * dt * k1)
    k3 = f(s + 0.5 * dt * k2)
    k4 = f(s + dt * k3)
    return s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


class ConvectionLoops:
    def __init__(self, members, steps, every, dt, device):
        self.members = members
        self.steps = steps
        self.every = every
        self.dt = dt
        self.device = device

    def rollout_cost(self, x0, obs):
        traj = wp.zeros((self.steps + 1, self.members), dtype=wp.vec3d, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(set_start, dim=self.members, inputs=[x0], outputs=[traj], device=self.device)
        for k in range(self.steps):
            wp.launch(rk4_step, dim=self.members,
                      inputs=[traj, k, wp.float64(self.dt), wp.float64(SIGMA), wp.float64(RHO), wp.float64(BETA)],
                      device=self.device)
        n_obs = obs.shape[0]
        wp.launch(misfit, dim=(n_obs, self.members),
                  inputs=[traj, obs, self.every, wp.float64(1.0 / (n_obs * self.members))],
                  outputs=[loss], device=self.device)
        return loss
