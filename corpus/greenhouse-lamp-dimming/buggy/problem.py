import numpy as np
import warp as wp


@wp.kernel
def deposit_light(
    dimming: wp.array(dtype=wp.float64),
    lamp_x: wp.array(dtype=wp.float64),
    cell_x: wp.array(dtype=wp.float64),
    height: wp.float64,
    flux: wp.float64,
    irradiance: wp.array(dtype=wp.float64),
):
    l, c = wp.tid()
    d = dimming[l]
    output = flux * d / (wp.float64(1.0) + wp.float64(0.4) * d)
    dx = cell_x[c] - lamp_x[l]
    r2 = dx * dx + height * height
    cos_t = height / wp.sqrt(r2)
    wp.atomic_add(irradiance, c, output * cos_t * cos_t * cos_t / r2)


@wp.kernel
def bench_error(
    irradiance: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    c = wp.tid()
    e = irradiance[c] - target[c]
    wp.atomic_add(loss, 0, e * e)


@wp.kernel
def energy_cost(
    dimming: wp.array(dtype=wp.float64),
    price: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    l = wp.tid()
    wp.atomic_add(loss, 0, price * dimming[l])


class GreenhouseBench:
    def __init__(self, device, lamps, cells):
        self.device = device
        self.lamps = lamps
        self.cells = cells
        self.height = 1.2
        self.flux = 2.6
        self.price = 0.05
        length = 1.5 * lamps
        rng = np.random.default_rng(3)
        self.lamp_x = wp.array(np.linspace(0.75, length - 0.75, lamps), dtype=wp.float64, device=device)
        xc = np.linspace(0.2, length - 0.2, cells)
        self.cell_x = wp.array(xc, dtype=wp.float64, device=device)
        target = 1.1 + 0.3 * np.sin(2.0 * np.pi * xc / length) + 0.05 * rng.standard_normal(cells)
        self.target = wp.array(target, dtype=wp.float64, device=device)
        start = 0.8 + 0.2 * rng.uniform(size=lamps)
        self.dimming = wp.array(start, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"dimming": self.dimming}
        self.irradiance = wp.zeros(cells, dtype=wp.float64, device=device, requires_grad=True)

    def _forward(self):
        self.irradiance.zero_()
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            deposit_light,
            dim=(self.lamps, self.cells),
            inputs=[self.dimming, self.lamp_x, self.cell_x, wp.float64(self.height), wp.float64(self.flux)],
            outputs=[self.irradiance],
            device=self.device,
        )
        wp.launch(bench_error, dim=self.cells, inputs=[self.irradiance, self.target], outputs=[loss], device=self.device)
        wp.launch(energy_cost, dim=self.lamps, inputs=[self.dimming, wp.float64(self.price)], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self._forward().numpy()[0])

    def gradient(self):
        self.dimming.grad.zero_()
        tape = wp.Tape()
        with tape:
            loss = self._forward()
        tape.backward(loss)
        return {"dimming": self.dimming.grad.numpy().copy()}

    def train(self, iterations, lr=0.1):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["dimming"]
            self.dimming.assign(np.clip(self.dimming.numpy() - lr * g, 0.0, 1.5))
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return GreenhouseBench(device, lamps=24, cells=96)
    return GreenhouseBench(device, lamps=6, cells=16)
