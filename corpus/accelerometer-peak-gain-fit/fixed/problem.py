import numpy as np
import warp as wp


@wp.kernel
def peak_index(
    raw: wp.array2d(dtype=wp.float64),
    gain: wp.array(dtype=wp.float64),
    offset: wp.array(dtype=wp.float64),
    n_samples: int,
    index: wp.array(dtype=int),
):
    i = wp.tid()
    best = wp.float64(-1.0e30)
    k = int(0)
    for p in range(n_samples):
        if raw[i, p] == wp.float64(0.0):
            continue
        a = gain[i] * raw[i, p] + offset[i]
        if a > best:
            best = a
            k = p
    index[i] = k


@wp.kernel
def peak_values(
    raw: wp.array2d(dtype=wp.float64),
    gain: wp.array(dtype=wp.float64),
    offset: wp.array(dtype=wp.float64),
    index: wp.array(dtype=int),
    peak: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    peak[i] = gain[i] * raw[i, index[i]] + offset[i]


@wp.kernel
def peak_misfit(
    peak: wp.array(dtype=wp.float64),
    reference: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = peak[i] - reference[i]
    wp.atomic_add(loss, 0, r * r)


class StationCalibration:
    def __init__(self, device, stations, samples):
        self.device = device
        self.stations = stations
        self.samples = samples
        rng = np.random.default_rng(5)
        t = np.linspace(0.0, 1.0, samples)
        raw = np.zeros((stations, samples))
        for i in range(stations):
            f = rng.uniform(3.0, 7.0)
            raw[i] = np.exp(-3.0 * t) * np.sin(2.0 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) + 0.05 * rng.normal(size=samples)
            drop = rng.choice(samples, size=samples // 6, replace=False)
            raw[i, drop] = 0.0
        true_gain = rng.uniform(0.8, 1.6, stations)
        true_gain[::3] *= -1.0
        true_offset = rng.uniform(-0.05, 0.05, stations)
        ref = np.array([np.max(true_gain[i] * raw[i][raw[i] != 0.0] + true_offset[i]) for i in range(stations)])
        self.raw = wp.array(raw, dtype=wp.float64, device=device)
        self.reference = wp.array(ref * (1.0 + 0.02 * rng.normal(size=stations)), dtype=wp.float64, device=device)
        self.gain = wp.array(true_gain * rng.uniform(0.7, 1.3, stations), dtype=wp.float64, device=device, requires_grad=True)
        self.offset = wp.zeros(stations, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"gain": self.gain, "offset": self.offset}

    def loss(self):
        index = wp.zeros(self.stations, dtype=int, device=self.device)
        wp.launch(
            peak_index,
            dim=self.stations,
            inputs=[self.raw, self.gain, self.offset, self.samples],
            outputs=[index],
            device=self.device,
        )
        peak = wp.zeros(self.stations, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            peak_values,
            dim=self.stations,
            inputs=[self.raw, self.gain, self.offset, index],
            outputs=[peak],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(peak_misfit, dim=self.stations, inputs=[peak, self.reference], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.1):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return StationCalibration(device, stations=64, samples=400)
    return StationCalibration(device, stations=8, samples=24)
