import numpy as np
import warp as wp

import langevin


class TrapArray:
    def __init__(self, beads, steps, dt=0.01, seed=0, device="cpu"):
        self.beads, self.steps, self.dt, self.device = beads, steps, dt, device
        rng = np.random.default_rng(1234)
        grid = np.stack(np.meshgrid(np.arange(4), np.arange((beads + 3) // 4)), -1).reshape(-1, 2)[:beads]
        self.center = wp.array(grid.astype(np.float64), dtype=wp.vec2d, device=device)
        self.start = wp.array(grid + 0.05 * rng.standard_normal((beads, 2)), dtype=wp.vec2d, device=device)
        self.tracked = wp.array(grid + 0.1 * rng.standard_normal((beads, 2)), dtype=wp.vec2d, device=device)
        self.seed = seed
        self.states = [wp.zeros(beads, dtype=wp.uint32, device=device) for _ in range(steps + 1)]
        self.x = [self.start] + [wp.zeros(beads, dtype=wp.vec2d, device=device, requires_grad=True) for _ in range(steps)]
        self.misfit = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def run(self, stiffness, log_sigma):
        wp.launch(langevin.seed_streams, dim=self.beads, inputs=[self.seed], outputs=[self.states[0]], device=self.device)
        for t in range(self.steps):
            wp.launch(
                langevin.euler_maruyama,
                dim=self.beads,
                inputs=[self.x[t], self.center, stiffness, log_sigma, wp.float64(self.dt), self.states[t]],
                outputs=[self.x[t + 1], self.states[t + 1]],
                device=self.device,
            )
        self.misfit.zero_()
        wp.launch(
            langevin.track_misfit,
            dim=self.beads,
            inputs=[self.x[-1], self.tracked, wp.float64(1.0 / self.beads)],
            outputs=[self.misfit],
            device=self.device,
        )
        return self.misfit
