import numpy as np
import warp as wp


@wp.kernel
def ride_step(
    z: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    road: wp.array(dtype=wp.float64),
    road_rate: wp.array(dtype=wp.float64),
    t: int,
    stiffness: wp.array(dtype=wp.float64),
    damping: wp.array(dtype=wp.float64),
    progression: wp.float64,
    mass: wp.float64,
    dt: wp.float64,
    z_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
    accel: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = z[i] - road[t]
    spring = stiffness[i] * (d + progression * d * d * d)
    a = -(spring + damping[i] * (v[i] - road_rate[t])) / mass
    vn = v[i] + dt * a
    v_out[i] = vn
    z_out[i] = z[i] + dt * vn
    accel[i] = a


@wp.kernel
def ride_cost(
    z: wp.array(dtype=wp.float64),
    accel: wp.array(dtype=wp.float64),
    road: wp.array(dtype=wp.float64),
    t: int,
    travel_weight: wp.float64,
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = z[i] - road[t]
    wp.atomic_add(loss, 0, scale * (accel[i] * accel[i] + travel_weight * d * d))


class FleetRide:
    def __init__(self, device, vehicles, steps, window):
        self.device = device
        self.n = vehicles
        self.steps = steps
        self.window = window
        self.windows = (steps + window - 1) // window
        self.dt = 0.01
        self.mass = 1.0
        self.progression = 20.0
        self.travel_weight = 400.0
        s = np.arange(steps + 1) * self.dt
        r = 0.04 * np.exp(-((s - 0.15) ** 2) / 0.002) + 0.02 * np.sin(9.0 * s)
        self.road = wp.array(r, dtype=wp.float64, device=device)
        self.road_rate = wp.array(np.gradient(r, self.dt), dtype=wp.float64, device=device)
        k = 60.0 + 20.0 * np.linspace(0.0, 1.0, vehicles)
        c = 4.0 + 2.0 * np.cos(np.arange(vehicles))
        self.stiffness = wp.array(k, dtype=wp.float64, requires_grad=True, device=device)
        self.damping = wp.array(c, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"stiffness": self.stiffness, "damping": self.damping}

    def _zeros(self):
        return wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)

    def run_window(self, z, v, w, loss):
        scale = self.dt / self.n
        for t in range(w * self.window, min((w + 1) * self.window, self.steps)):
            zn, vn, acc = self._zeros(), self._zeros(), self._zeros()
            wp.launch(
                ride_step,
                dim=self.n,
                inputs=[z, v, self.road, self.road_rate, t, self.stiffness, self.damping, wp.float64(self.progression), wp.float64(self.mass), wp.float64(self.dt)],
                outputs=[zn, vn, acc],
                device=self.device,
            )
            wp.launch(
                ride_cost,
                dim=self.n,
                inputs=[zn, acc, self.road, t + 1, wp.float64(self.travel_weight), wp.float64(scale)],
                outputs=[loss],
                device=self.device,
            )
            z, v = zn, vn
        return z, v

    def objective(self):
        z, v = self._zeros(), self._zeros()
        loss = wp.zeros(1, dtype=wp.float64, device=self.device)
        for w in range(self.windows):
            z, v = self.run_window(z, v, w, loss)
        return float(loss.numpy()[0])

    def gradient(self):
        for arr in self.params.values():
            arr.grad.zero_()
        z, v = self._zeros(), self._zeros()
        for w in range(self.windows):
            loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
            tape = wp.Tape()
            with tape:
                z, v = self.run_window(z, v, w, loss)
            tape.backward(loss)
        return {k: arr.grad.numpy().copy() for k, arr in self.params.items()}


def make_problem(device, scale="small"):
    if scale == "production":
        return FleetRide(device, vehicles=32, steps=400, window=50)
    return FleetRide(device, vehicles=6, steps=60, window=15)
