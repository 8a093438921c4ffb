import numpy as np
import warp as wp

import rollout


class RovFleet:
    def __init__(self, device, n, windows, steps_per_window):
        self.device = device
        self.n = n
        self.windows = windows
        self.steps_per_window = steps_per_window
        self.steps = windows * steps_per_window
        self.mass = 40.0
        self.dt = 0.5
        rng = np.random.default_rng(31)
        self.start = rng.uniform(-5.0, 5.0, (n, 2))
        t = np.arange(self.steps) * self.dt
        phase = rng.uniform(0.0, 2.0 * np.pi, n)
        heading = phase[None, :] + 0.05 * t[:, None]
        cmd = np.stack([np.cos(heading), np.sin(heading)], axis=2) * 20.0
        cmd[self.steps // 2 :] *= 0.5
        self.command = wp.array(cmd, dtype=wp.vec2d, device=device)
        true_gain = rng.uniform(0.8, 1.2, n)
        true_drag = rng.uniform(15.0, 25.0, n)
        true_current = np.array([0.15, -0.08])
        pings = self._simulate(true_gain, true_drag, true_current, cmd)
        pings += 0.02 * rng.standard_normal(pings.shape)
        self.pings = wp.array(pings, dtype=wp.vec2d, device=device)
        self.gain = wp.array(np.ones(n), dtype=wp.float64, device=device, requires_grad=True)
        self.drag = wp.array(np.full(n, 20.0), dtype=wp.float64, device=device, requires_grad=True)
        self.current = wp.zeros(1, dtype=wp.vec2d, device=device, requires_grad=True)
        self.params = {"gain": self.gain, "drag": self.drag, "current": self.current}

    def _simulate(self, gain, drag, current, cmd):
        pos = self.start.copy()
        vel = np.zeros_like(pos)
        pings = []
        for s in range(self.steps):
            rel = vel - current
            speed = np.linalg.norm(rel, axis=1, keepdims=True)
            force = gain[:, None] * cmd[s] - drag[:, None] * speed * rel
            vel = vel + self.dt * force / self.mass
            pos = pos + self.dt * vel
            if (s + 1) % self.steps_per_window == 0:
                pings.append(pos.copy())
        return np.array(pings)

    def objective(self):
        return rollout.track_loss(self)

    def gradient(self):
        for p in self.params.values():
            p.grad.zero_()
        rollout.accumulate_gradient(self)
        return {k: v.grad.numpy().copy() for k, v in self.params.items()}

    def train(self, iterations, rates=None):
        rates = rates or {"gain": 2.0e-3, "drag": 0.2, "current": 2.0e-4}
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, arr in self.params.items():
                arr.assign(arr.numpy() - rates[k] * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return RovFleet(device, n=32, windows=12, steps_per_window=20)
    return RovFleet(device, n=4, windows=4, steps_per_window=6)
