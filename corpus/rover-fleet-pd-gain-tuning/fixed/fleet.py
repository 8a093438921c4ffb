import numpy as np
import warp as wp

import dynamics


class Fleet:
    def __init__(self, n, horizon, dt=0.05, device="cpu", seed=8):
        rng = np.random.default_rng(seed)
        self.n, self.horizon, self.dt, self.device = n, horizon, dt, device
        self.goal = wp.array(rng.uniform(0.5, 2.0, n).astype(np.float32), device=device)
        self.friction = wp.array(rng.uniform(0.1, 0.8, n).astype(np.float32), device=device)
        self.pos = [wp.zeros(n, dtype=float, device=device, requires_grad=True) for _ in range(horizon + 1)]
        self.vel = [wp.zeros(n, dtype=float, device=device, requires_grad=True) for _ in range(horizon + 1)]
        self.running = wp.zeros(n, dtype=float, device=device, requires_grad=True)
        self.cost = wp.zeros(n, dtype=float, device=device)
        self.effort_weight = 0.05
        self.terminal_weight = 2.0

    def rollout(self, kp, kd):
        self.running.zero_()
        for t in range(self.horizon):
            wp.launch(
                dynamics.closed_loop_step,
                dim=self.n,
                inputs=[self.pos[t], self.vel[t], kp, kd, self.goal, self.friction, self.dt, self.effort_weight],
                outputs=[self.pos[t + 1], self.vel[t + 1], self.running],
                device=self.device,
            )
        wp.launch(
            dynamics.episode_cost,
            dim=self.n,
            inputs=[self.pos[-1], self.vel[-1], self.goal, self.running, self.terminal_weight],
            outputs=[self.cost],
            device=self.device,
        )
        return self.cost
