import numpy as np
import warp as wp


@wp.kernel
def swing_step(
    traj: wp.array2d(dtype=wp.vec2d),
    amplitude: wp.array(dtype=wp.float64),
    k: int,
    dt: wp.float64,
    damping: wp.float64,
    omega: wp.float64,
):
    i = wp.tid()
    s = traj[k, i]
    t = dt * wp.float64(k)
    acc = -damping * s[1] - wp.sin(s[0]) + amplitude[i] * wp.cos(omega * t)
    w = s[1] + dt * acc
    traj[k + 1, i] = wp.vec2d(s[0] + dt * w, w)


@wp.kernel
def set_start(start: wp.array(dtype=wp.vec2d), traj: wp.array2d(dtype=wp.vec2d)):
    i = wp.tid()
    traj[0, i] = start[i]


@wp.kernel
def final_energy(traj: wp.array2d(dtype=wp.vec2d), last: int, scale: wp.float64, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s = traj[last, i]
    e = wp.float64(0.5) * s[1] * s[1] + wp.float64(1.0) - wp.cos(s[0])
    wp.atomic_add(loss, 0, scale * e)


class SwingRide:
    def __init__(self, device, n, horizon):
        self.device = device
        self.n = n
        self.dt = 0.1
        self.steps = int(round(horizon / self.dt))
        self.damping = 0.25
        self.omega = 2.0 / 3.0
        rng = np.random.default_rng(9)
        self.start_np = np.stack([rng.uniform(-0.2, 0.2, n), np.zeros(n)], axis=1)
        self.start = wp.array(self.start_np, dtype=wp.vec2d, device=device)
        self.amplitude = wp.array(rng.uniform(1.4, 1.55, n), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"amplitude": self.amplitude}

    def forward(self):
        traj = wp.zeros((self.steps + 1, self.n), dtype=wp.vec2d, requires_grad=True, device=self.device)
        wp.launch(set_start, dim=self.n, inputs=[self.start], outputs=[traj], device=self.device)
        for k in range(self.steps):
            wp.launch(swing_step, dim=self.n,
                      inputs=[traj, self.amplitude, k, wp.float64(self.dt), wp.float64(self.damping),
                              wp.float64(self.omega)], device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(final_energy, dim=self.n, inputs=[traj, self.steps, wp.float64(1.0 / self.n)], outputs=[loss],
                  device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"amplitude": self.amplitude.grad.numpy().copy()}
        tape.zero()
        return g

    def reference_gradient(self):
        h = 1e-30
        a = self.amplitude.numpy().astype(np.complex128) + 1j * h
        th = self.start_np[:, 0].astype(np.complex128)
        w = self.start_np[:, 1].astype(np.complex128)
        for k in range(self.steps):
            acc = -self.damping * w - np.sin(th) + a * np.cos(self.omega * self.dt * k)
            w = w + self.dt * acc
            th = th + self.dt * w
        e = 0.5 * w * w + 1.0 - np.cos(th)
        return {"amplitude": e.imag / h / self.n}

    def train(self, iterations, lr=1e-6):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["amplitude"]
            self.amplitude.assign(self.amplitude.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return SwingRide(device, 64, 120.0)
    return SwingRide(device, 8, 60.0)
