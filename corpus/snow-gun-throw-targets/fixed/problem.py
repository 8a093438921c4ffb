import numpy as np
import warp as wp

from emission import claim, emit, fly, throw_error


class SnowGuns:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(6)
        nozzle = np.stack([np.linspace(0.0, 70.0, n), np.zeros(n), np.full(n, 8.0)], axis=1)
        target = nozzle + np.stack([rng.uniform(-5, 5, n), rng.uniform(20.0, 30.0, n), -8.0 * np.ones(n)], axis=1)
        self.active_np = (rng.uniform(size=n) < 0.7).astype(np.int32)
        self.active_np[:2] = [0, 1]
        self.active = wp.array(self.active_np, dtype=wp.int32, device=device)
        self.nozzle = wp.array(nozzle, dtype=wp.vec3d, device=device)
        self.target = wp.array(target, dtype=wp.vec3d, device=device)
        self.flight_time = 2.0
        self.gravity = wp.vec3d(0.0, 0.0, -9.81)
        v0 = np.stack([rng.uniform(-1, 1, n), rng.uniform(8.0, 14.0, n), rng.uniform(4.0, 8.0, n)], axis=1)
        self.exit_velocity = wp.array(v0, dtype=wp.vec3d, requires_grad=True, device=device)
        self.params = {"exit_velocity": self.exit_velocity}

    def forward(self):
        n, d = self.n, self.device
        head = wp.zeros(1, dtype=wp.int32, device=d)
        pos = wp.zeros(n, dtype=wp.vec3d, requires_grad=True, device=d)
        vel = wp.zeros(n, dtype=wp.vec3d, requires_grad=True, device=d)
        owner = wp.zeros(n, dtype=wp.int32, device=d)
        landing = wp.zeros(n, dtype=wp.vec3d, requires_grad=True, device=d)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=d)
        slot = wp.zeros(n, dtype=wp.int32, device=d)
        wp.launch(claim, dim=n, inputs=[self.active, head], outputs=[slot], device=d)
        wp.launch(emit, dim=n, inputs=[self.active, self.nozzle, self.exit_velocity, slot],
                  outputs=[pos, vel, owner], device=d)
        wp.launch(fly, dim=n, inputs=[pos, vel, wp.float64(self.flight_time), self.gravity], outputs=[landing],
                  device=d)
        wp.launch(throw_error, dim=n, inputs=[landing, owner, self.target, head], outputs=[loss], device=d)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"exit_velocity": self.exit_velocity.grad.numpy().copy()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["exit_velocity"]
            self.exit_velocity.assign(self.exit_velocity.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    return SnowGuns(device, 256 if scale == "production" else 8)
