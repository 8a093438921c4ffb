import numpy as np
import warp as wp


@wp.kernel
def release(
    speed0: wp.array(dtype=wp.float64),
    height: wp.float64,
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    pos[i] = wp.vec2d(wp.float64(0.0), height)
    vel[i] = wp.vec2d(speed0[i], wp.float64(0.0))


@wp.kernel
def fall(
    drag: wp.array(dtype=wp.float64),
    gravity: wp.vec2d,
    dt: wp.float64,
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
    pos_next: wp.array(dtype=wp.vec2d),
    vel_next: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    v = vel[i]
    a = gravity - drag[i] * wp.length(v) * v
    vn = v + dt * a
    vel_next[i] = vn
    pos_next[i] = pos[i] + dt * vn


@wp.kernel
def track_error(
    pos: wp.array(dtype=wp.vec2d),
    target: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pos[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class AirdropFit:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.05
        self.height = 60.0
        self.gravity = wp.vec2d(0.0, -9.81)
        rng = np.random.default_rng(13)
        true_drag = rng.uniform(0.02, 0.08, n)
        true_speed = rng.uniform(12.0, 20.0, n)
        early, late = self._simulate_numpy(true_drag, true_speed)
        self.radar_early = wp.array(early + rng.normal(0.0, 0.5, early.shape), dtype=wp.vec2d, device=device)
        self.radar_late = wp.array(late + rng.normal(0.0, 0.5, late.shape), dtype=wp.vec2d, device=device)
        self.drag = wp.array(np.full(n, 0.05), dtype=wp.float64, requires_grad=True, device=device)
        self.speed0 = wp.array(np.full(n, 16.0), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"drag": self.drag, "speed0": self.speed0}

    def _simulate_numpy(self, drag, speed):
        p = np.stack([np.zeros(self.n), np.full(self.n, self.height)], axis=1)
        v = np.stack([speed, np.zeros(self.n)], axis=1)
        g = np.array([0.0, -9.81])
        mid = None
        for k in range(self.steps):
            a = g - drag[:, None] * np.linalg.norm(v, axis=1)[:, None] * v
            v = v + self.dt * a
            p = p + self.dt * v
            if k + 1 == self.steps // 2:
                mid = p.copy()
        return mid, p

    def forward(self):
        pos = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
        vel = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
        wp.launch(release, dim=self.n, inputs=[self.speed0, wp.float64(self.height)], outputs=[pos, vel], device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for k in range(self.steps):
            pos_next = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
            vel_next = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
            wp.launch(
                fall,
                dim=self.n,
                inputs=[self.drag, self.gravity, wp.float64(self.dt), pos, vel],
                outputs=[pos_next, vel_next],
                device=self.device,
            )
            pos, vel = pos_next, vel_next
            if k + 1 == self.steps // 2:
                wp.launch(track_error, dim=self.n, inputs=[pos, self.radar_early], outputs=[loss], device=self.device)
        wp.launch(track_error, dim=self.n, inputs=[pos, self.radar_late], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def train(self, iterations, lr_drag=1.0e-6, lr_speed=0.025):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            self.drag.assign(self.drag.numpy() - lr_drag * g["drag"])
            self.speed0.assign(self.speed0.numpy() - lr_speed * g["speed0"])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return AirdropFit(device, n=256, steps=40)
    return AirdropFit(device, n=6, steps=40)
