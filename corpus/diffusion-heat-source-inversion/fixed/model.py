"""1D heat rod with a distributed, positive heat source."""
import numpy as np
import warp as wp


@wp.kernel
def source_activation(theta: wp.array(dtype=float), q: wp.array(dtype=float)):
    i = wp.tid()
    q[i] = wp.log(1.0 + wp.exp(theta[i]))


@wp.kernel
def diffuse_step(
    u: wp.array(dtype=float),
    q: wp.array(dtype=float),
    alpha: float,
    dt: float,
    u_out: wp.array(dtype=float),
):
    i = wp.tid()
    n = u.shape[0]
    left = float(0.0)
    right = float(0.0)
    if i > 0:
        left = u[i - 1]
    if i < n - 1:
        right = u[i + 1]
    u_out[i] = u[i] + alpha * (left - 2.0 * u[i] + right) + dt * q[i]


@wp.kernel
def sensor_loss(
    u: wp.array(dtype=float),
    sensor_idx: wp.array(dtype=int),
    readings: wp.array(dtype=float),
    loss: wp.array(dtype=float),
):
    s = wp.tid()
    d = u[sensor_idx[s]] - readings[s]
    wp.atomic_add(loss, 0, d * d / float(readings.shape[0]))


def reference_solution(theta, steps, alpha, dt):
    q = np.log1p(np.exp(theta))
    u = np.zeros_like(theta)
    for _ in range(steps):
        left = np.concatenate([[0.0], u[:-1]])
        right = np.concatenate([u[1:], [0.0]])
        u = u + alpha * (left - 2.0 * u + right) + dt * q
    return u


def make_problem(n=32, stride=4, steps=10, alpha=0.2, dt=0.1, seed=1):
    rng = np.random.default_rng(seed)
    xs = np.linspace(0.0, 1.0, n)
    theta_true = 1.5 * np.sin(2.0 * np.pi * xs) + 0.2 * rng.normal(size=n)
    sensors = np.arange(1, n - 1, stride)
    readings = reference_solution(theta_true, steps, alpha, dt)[sensors]
    return sensors, readings


class RodModel:
    def __init__(self, n=32, stride=4, steps=10, alpha=0.2, dt=0.1):
        self.n, self.steps, self.alpha, self.dt = n, steps, alpha, dt
        sensors, readings = make_problem(n, stride, steps, alpha, dt)
        self.sensors = wp.array(sensors.astype(np.int32), dtype=int)
        self.readings = wp.array(readings, dtype=float)
        self.theta = wp.zeros(n, dtype=float, requires_grad=True)
        self.q = wp.zeros(n, dtype=float, requires_grad=True)
        self.u = [wp.zeros(n, dtype=float, requires_grad=True) for _ in range(steps + 1)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def forward(self):
        self.loss.zero_()
        wp.launch(source_activation, dim=self.n, inputs=[self.theta], outputs=[self.q])
        for t in range(self.steps):
            wp.launch(
                diffuse_step, dim=self.n, inputs=[self.u[t], self.q, self.alpha, self.dt], outputs=[self.u[t + 1]]
            )
        wp.launch(
            sensor_loss,
            dim=len(self.readings),
            inputs=[self.u[self.steps], self.sensors, self.readings],
            outputs=[self.loss],
        )
        return self.loss
