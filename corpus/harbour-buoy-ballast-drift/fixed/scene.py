import numpy as np
import warp as wp

import bodies


class State:
    def __init__(self, n, device):
        self.x = wp.zeros(n, dtype=wp.vec3, device=device, requires_grad=True)
        self.v = wp.zeros(n, dtype=wp.vec3, device=device, requires_grad=True)


class Harbour:
    def __init__(self, n_buoys, n_steps, dt=0.02, device="cpu", seed=5):
        rng = np.random.default_rng(seed)
        self.n, self.n_steps, self.dt, self.device = n_buoys, n_steps, dt, device
        self.area = wp.array(rng.uniform(0.004, 0.008, n_buoys).astype(np.float32), device=device)
        self.current = wp.vec3(0.4, 0.0, -0.15)
        self.level = 0.0
        self.heave_damping = 6.0
        start = np.zeros((n_buoys, 3), dtype=np.float32)
        start[:, 0] = rng.uniform(-2.0, 2.0, n_buoys)
        start[:, 1] = rng.uniform(-0.1, 0.1, n_buoys)
        start[:, 2] = rng.uniform(-2.0, 2.0, n_buoys)
        self.states = [State(n_buoys, device) for _ in range(n_steps + 1)]
        self.states[0].x.assign(start)
        obs = start + np.array([0.5, -0.05, -0.2], dtype=np.float32) + 0.05 * rng.standard_normal((n_buoys, 3)).astype(np.float32)
        self.observed = wp.array(obs, dtype=wp.vec3, device=device)
        self.loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)

    def simulate(self, mass, drag):
        for k in range(self.n_steps):
            a, b = self.states[k], self.states[k + 1]
            wp.launch(
                bodies.integrate_buoys,
                dim=self.n,
                inputs=[a.x, a.v, mass, drag, self.area, self.current, self.level, self.heave_damping, self.dt],
                outputs=[b.x, b.v],
                device=self.device,
            )
        self.loss.zero_()
        wp.launch(bodies.track_error, dim=self.n, inputs=[self.states[-1].x, self.observed], outputs=[self.loss], device=self.device)
        return self.loss
