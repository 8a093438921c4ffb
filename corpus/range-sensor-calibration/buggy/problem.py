import numpy as np
import warp as wp


@wp.kernel
def simulate_readings(
    scale: wp.array(dtype=wp.float64),
    offset: wp.array(dtype=wp.float64),
    distance: wp.array(dtype=wp.float64),
    per_sensor: int,
    sigma: wp.float64,
    seed: int,
    readings: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    s = t // per_sensor
    state = wp.rand_init(seed, t)
    n = wp.float64(wp.randn(state))
    readings[t] = scale[s] * distance[t] + offset[s] + sigma * n


@wp.kernel
def reading_loss(
    readings: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    inv_count: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    d = readings[t] - measured[t]
    wp.atomic_add(loss, 0, inv_count * d * d)


class Problem:
    def __init__(self, device, sensors, per_sensor):
        self.device = device
        self.sensors = sensors
        self.per_sensor = per_sensor
        self.count = sensors * per_sensor
        self.sigma = 0.05
        rng = np.random.default_rng(5)
        distance = rng.uniform(0.5, 3.0, self.count)
        true_scale = rng.uniform(0.9, 1.1, sensors)
        true_offset = rng.uniform(-0.1, 0.1, sensors)
        s = np.repeat(np.arange(sensors), per_sensor)
        measured = true_scale[s] * distance + true_offset[s] + rng.normal(0.0, self.sigma, self.count)
        self.params = {
            "scale": wp.array(np.ones(sensors), dtype=wp.float64, device=device, requires_grad=True),
            "offset": wp.array(np.zeros(sensors), dtype=wp.float64, device=device, requires_grad=True),
        }
        self.distance = wp.array(distance, dtype=wp.float64, device=device)
        self.measured = wp.array(measured, dtype=wp.float64, device=device)
        self.readings = wp.zeros(self.count, dtype=wp.float64, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()
        self.counter = 0
        self.pinned = None

    def set_seed(self, seed):
        self.pinned = int(seed)

    def _next_seed(self):
        if self.pinned is not None:
            return self.pinned
        self.counter += 1
        return self.counter

    def _forward(self):
        self.loss.zero_()
        wp.launch(
            simulate_readings,
            dim=self.count,
            inputs=[
                self.params["scale"],
                self.params["offset"],
                self.distance,
                self.per_sensor,
                wp.float64(self.sigma),
                self._next_seed(),
            ],
            outputs=[self.readings],
            device=self.device,
        )
        wp.launch(
            reading_loss,
            dim=self.count,
            inputs=[self.readings, self.measured, wp.float64(1.0 / self.count)],
            outputs=[self.loss],
            device=self.device,
        )

    def objective(self):
        self._forward()
        return float(self.loss.numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            self._forward()
        self.tape.backward(self.loss)
        out = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        self.tape.zero()
        return out

    def train(self, iterations, lr=0.2):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, arr in self.params.items():
                arr.assign(arr.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, sensors=16, per_sensor=64)
    return Problem(device, sensors=4, per_sensor=4)
