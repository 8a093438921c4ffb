import numpy as np
import warp as wp


@wp.kernel
def wake_deficit(
    yaw: wp.array(dtype=wp.float64),
    position: wp.array(dtype=wp.vec2d),
    wind_dir: wp.array(dtype=wp.vec2d),
    strength: wp.float64,
    width: wp.float64,
    deflection: wp.float64,
    deficit: wp.array2d(dtype=wp.float64),
):
    s, i, j = wp.tid()
    u = wind_dir[s]
    side = wp.vec2d(-u[1], u[0])
    d = position[i] - position[j]
    down = wp.dot(d, u)
    if down > wp.float64(0.0):
        g = yaw[j]
        offset = wp.dot(d, side) - deflection * down * wp.sin(g) * wp.cos(g) * wp.cos(g)
        spread = width + wp.float64(0.05) * down
        a = strength * wp.cos(g) * wp.cos(g) / (wp.float64(1.0) + wp.float64(0.1) * down)
        wp.atomic_add(deficit, s, i, a * wp.exp(-offset * offset / (wp.float64(2.0) * spread * spread)))


@wp.kernel
def turbine_power(
    yaw: wp.array(dtype=wp.float64),
    deficit: wp.array2d(dtype=wp.float64),
    sector_power: wp.array(dtype=wp.float64),
):
    s, i = wp.tid()
    c = wp.cos(yaw[i])
    r = wp.float64(1.0) - deficit[s, i]
    wp.atomic_add(sector_power, s, c * c * c * r * r * r)


class WindFarm:
    def __init__(self, device, rows, cols, sectors):
        self.device = device
        self.n = rows * cols
        self.sectors = sectors
        rng = np.random.default_rng(5)
        gx, gy = np.meshgrid(np.arange(cols) * 7.0, np.arange(rows) * 4.0)
        pos = np.stack([gx.ravel(), gy.ravel()], axis=1) + rng.uniform(-0.3, 0.3, (self.n, 2))
        self.position = wp.array(pos, dtype=wp.vec2d, device=device)
        angles = np.deg2rad(np.linspace(-24.0, 24.0, sectors)) + 0.03
        self.wind_dir = wp.array(np.stack([np.cos(angles), np.sin(angles)], axis=1), dtype=wp.vec2d, device=device)
        freq = np.exp(-0.5 * (np.linspace(-1.0, 1.0, sectors) / 0.7) ** 2)
        self.frequency = freq / freq.sum()
        self.strength = 0.35
        self.width = 0.6
        self.deflection = 0.3
        yaw0 = np.deg2rad(rng.uniform(-12.0, 12.0, self.n))
        self.yaw = wp.array(yaw0, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"yaw": self.yaw}
        self.sector_power = wp.zeros(sectors, dtype=wp.float64, device=device, requires_grad=True)
        self.seed = wp.array(-self.frequency, dtype=wp.float64, device=device)
        self.sector_power.grad.assign(self.seed)

    def _forward(self):
        self.sector_power.zero_()
        deficit = wp.zeros((self.sectors, self.n), dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            wake_deficit,
            dim=(self.sectors, self.n, self.n),
            inputs=[
                self.yaw,
                self.position,
                self.wind_dir,
                wp.float64(self.strength),
                wp.float64(self.width),
                wp.float64(self.deflection),
            ],
            outputs=[deficit],
            device=self.device,
        )
        wp.launch(turbine_power, dim=(self.sectors, self.n), inputs=[self.yaw, deficit], outputs=[self.sector_power], device=self.device)

    def objective(self):
        self._forward()
        return float(-np.dot(self.frequency, self.sector_power.numpy()))

    def gradient(self):
        tape = wp.Tape()
        with tape:
            self._forward()
        tape.backward()
        grads = {"yaw": self.yaw.grad.numpy().copy()}
        tape.zero()
        return grads

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["yaw"]
            self.yaw.assign(self.yaw.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return WindFarm(device, rows=4, cols=8, sectors=12)
    return WindFarm(device, rows=2, cols=4, sectors=5)
