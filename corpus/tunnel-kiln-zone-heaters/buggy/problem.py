import numpy as np
import warp as wp


@wp.kernel
def heat_ware(
    temp: wp.array(dtype=wp.float64),
    power: wp.array(dtype=wp.float64),
    zone: int,
    ambient: wp.float64,
    gain: wp.float64,
    convection: wp.float64,
    radiation: wp.float64,
    heat_capacity: wp.array(dtype=wp.float64),
    dt: wp.float64,
    temp_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    t = temp[i]
    gas = ambient + gain * power[zone]
    q = convection * (gas - t) + radiation * (gas * gas * gas * gas - t * t * t * t)
    temp_next[i] = t + dt * q / heat_capacity[i]


@wp.kernel
def firing_error(
    temp: wp.array(dtype=wp.float64),
    target: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    e = temp[i] - target
    wp.atomic_add(loss, 0, e * e)


@wp.kernel
def fuel_cost(
    power: wp.array(dtype=wp.float64),
    price: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    z = wp.tid()
    p = power[z]
    wp.atomic_add(loss, 0, price * p * p)


@wp.kernel
def cap_step(
    g: wp.array(dtype=wp.float64),
    limit: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    z = wp.tid()
    out[z] = wp.clamp(g[z], -limit, limit)


class TunnelKiln:
    def __init__(self, device, zones, pieces, substeps):
        self.device = device
        self.zones = zones
        self.pieces = pieces
        self.substeps = substeps
        self.steps = zones * substeps
        self.ambient = 0.3
        self.gain = 0.9
        self.convection = 0.8
        self.radiation = 0.25
        self.dt = 0.25
        self.price = 0.02
        self.limit = 25.0
        rng = np.random.default_rng(17)
        self.heat_capacity = wp.array(rng.uniform(2.0, 3.5, pieces), dtype=wp.float64, device=device)
        peak = 1.25
        curve = self.ambient + (peak - self.ambient) * np.sin(np.linspace(0.15, 0.95, zones) * np.pi / 1.1)
        self.target = curve
        self.power = wp.array(rng.uniform(0.6, 1.0, zones), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"power": self.power}
        self.temp0 = wp.array(np.full(pieces, self.ambient), dtype=wp.float64, device=device)

    def _forward(self):
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        temp = self.temp0
        for z in range(self.zones):
            for _ in range(self.substeps):
                nxt = wp.zeros(self.pieces, dtype=wp.float64, device=self.device, requires_grad=True)
                wp.launch(
                    heat_ware,
                    dim=self.pieces,
                    inputs=[
                        temp,
                        self.power,
                        z,
                        wp.float64(self.ambient),
                        wp.float64(self.gain),
                        wp.float64(self.convection),
                        wp.float64(self.radiation),
                        self.heat_capacity,
                        wp.float64(self.dt),
                    ],
                    outputs=[nxt],
                    device=self.device,
                )
                temp = nxt
            wp.launch(firing_error, dim=self.pieces, inputs=[temp, wp.float64(self.target[z])], outputs=[loss], device=self.device)
        wp.launch(fuel_cost, dim=self.zones, inputs=[self.power, wp.float64(self.price)], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self._forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self._forward()
        tape.backward(loss)
        capped = wp.zeros(self.zones, dtype=wp.float64, device=self.device)
        wp.launch(cap_step, dim=self.zones, inputs=[self.power.grad, wp.float64(self.limit)], outputs=[capped], device=self.device)
        self.power.grad = capped
        grads = {"power": self.power.grad.numpy().copy()}
        tape.zero()
        return grads

    def train(self, iterations, lr=0.02):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["power"]
            self.power.assign(self.power.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return TunnelKiln(device, zones=16, pieces=64, substeps=12)
    return TunnelKiln(device, zones=8, pieces=4, substeps=4)
