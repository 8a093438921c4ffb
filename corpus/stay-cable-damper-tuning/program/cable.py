import numpy as np
import warp as wp


@wp.kernel
def cable_step(
    y: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    damper: wp.array(dtype=wp.float64),
    tension: wp.float64,
    dx: wp.float64,
    dt: wp.float64,
    y_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = y.shape[0]
    left = wp.float64(0.0)
    right = wp.float64(0.0)
    if i > 0:
        left = y[i - 1]
    if i < n - 1:
        right = y[i + 1]
    acc = tension * (left - wp.float64(2.0) * y[i] + right) / (dx * dx) - damper[i] * v[i]
    vn = v[i] + dt * acc
    v_out[i] = vn
    y_out[i] = y[i] + dt * vn


@wp.kernel
def vibration_energy(y: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.float64(0.5) * v[i] * v[i] + wp.float64(50.0) * y[i] * y[i])


class StayCable:
    def __init__(self, nodes, steps, device):
        self.n = nodes
        self.steps = steps
        self.device = device
        self.tension = 1.0
        self.dx = 1.0 / (nodes + 1)
        self.dt = 0.5 * self.dx
        x = np.arange(1, nodes + 1) * self.dx
        self.y0 = wp.array(0.05 * np.sin(np.pi * x) + 0.02 * np.sin(3 * np.pi * x), dtype=wp.float64, device=device)
        self.v0 = wp.zeros(nodes, dtype=wp.float64, device=device)

    def rollout(self, damper):
        y, v = self.y0, self.v0
        for _ in range(self.steps):
            y_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            v_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(cable_step, dim=self.n,
                      inputs=[y, v, damper, wp.float64(self.tension), wp.float64(self.dx), wp.float64(self.dt)],
                      outputs=[y_next, v_next], device=self.device)
            y, v = y_next, v_next
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(vibration_energy, dim=self.n, inputs=[y, v], outputs=[loss], device=self.device)
        return loss
