import numpy as np
import warp as wp


@wp.kernel
def received_power(
    tilt: wp.array(dtype=wp.float64),
    mirror_x: wp.array(dtype=wp.float64),
    sun: wp.vec2d,
    tower_height: wp.float64,
    spread: wp.float64,
    power: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    th = tilt[i]
    n = wp.vec2d(wp.sin(th), wp.cos(th))
    s_dot_n = wp.dot(sun, n)
    r = sun - wp.float64(2.0) * s_dot_n * n
    to_tower = wp.normalize(wp.vec2d(-mirror_x[i], tower_height))
    d = r - to_tower
    power[i] = -s_dot_n * wp.exp(-wp.dot(d, d) / spread)


class HeliostatField:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.mirror_x = wp.array(np.linspace(2.0, 20.0, n), dtype=wp.float64, device=device)
        elevation = np.deg2rad(50.0)
        self.sun = wp.vec2d(-np.cos(elevation), -np.sin(elevation))
        self.tower_height = 10.0
        self.spread = 0.05
        weights = 1.0 + 0.5 * np.cos(np.linspace(0.0, 3.0, n))
        self.weights = weights
        self.d_power = wp.array(-weights, dtype=wp.float64, device=device)
        self.tilt = wp.array(np.full(n, -0.3) + 0.05 * np.sin(np.arange(n)), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"tilt": self.tilt}

    def forward(self):
        power = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            received_power,
            dim=self.n,
            inputs=[self.tilt, self.mirror_x, self.sun, wp.float64(self.tower_height), wp.float64(self.spread)],
            outputs=[power],
            device=self.device,
        )
        return power

    def objective(self):
        return float(-np.dot(self.weights, self.forward().numpy()))

    def gradient(self):
        self.tilt.grad.zero_()
        tape = wp.Tape()
        with tape:
            power = self.forward()
        power.grad.assign(self.d_power)
        tape.backward()
        return {"tilt": self.tilt.grad.numpy().copy()}


def make_problem(device, scale="small"):
    if scale == "production":
        return HeliostatField(device, n=64)
    return HeliostatField(device, n=8)
