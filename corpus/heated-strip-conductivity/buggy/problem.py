import numpy as np
import warp as wp

from state import StripFields


@wp.kernel
def face_flux(
    temp: wp.array(dtype=wp.float64),
    conductivity: wp.array(dtype=wp.float64),
    softening: wp.float64,
    flux: wp.array(dtype=wp.float64),
):
    j = wp.tid() + 1
    t_left = temp[j - 1]
    t_right = temp[j]
    k = conductivity[j - 1] * (wp.float64(1.0) + softening * wp.float64(0.5) * (t_left + t_right))
    flux[j] = -k * (t_right - t_left)


@wp.kernel
def advance(
    temp: wp.array(dtype=wp.float64),
    flux: wp.array(dtype=wp.float64),
    source: wp.array(dtype=wp.float64),
    cooling: wp.float64,
    dt: wp.float64,
    temp_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    t = temp[i]
    temp_out[i] = t + dt * (flux[i] - flux[i + 1] + source[i] - cooling * t)


@wp.kernel
def mismatch(
    temp: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = temp[i] - target[i]
    wp.atomic_add(loss, 0, r * r)


class HeatedStrip:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.1
        self.cooling = 0.3
        self.softening = -0.05
        x = np.linspace(0.0, 1.0, n)
        self.temp0 = np.full(n, 1.0)
        self.target = wp.array(1.0 + 0.8 * np.exp(-((x - 0.4) ** 2) / 0.05), dtype=wp.float64, device=device)
        self.conductivity = wp.array(1.0 + 0.2 * np.sin(4.0 * x[:-1]), dtype=wp.float64, requires_grad=True, device=device)
        self.source = wp.array(0.3 + 0.5 * np.exp(-((x - 0.5) ** 2) / 0.1), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"conductivity": self.conductivity, "source": self.source}

    def forward(self):
        fields = StripFields(self.n, self.steps, self.device)
        fields.temp[0].assign(self.temp0)
        for t in range(self.steps):
            wp.launch(
                face_flux,
                dim=self.n - 1,
                inputs=[fields.temp[t], self.conductivity, wp.float64(self.softening)],
                outputs=[fields.flux[t]],
                device=self.device,
            )
            wp.launch(
                advance,
                dim=self.n,
                inputs=[fields.temp[t], fields.flux[t], self.source, wp.float64(self.cooling), wp.float64(self.dt)],
                outputs=[fields.temp[t + 1]],
                device=self.device,
            )
        wp.launch(mismatch, dim=self.n, inputs=[fields.temp[self.steps], self.target], outputs=[fields.loss], device=self.device)
        return fields.loss

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


def make_problem(device, scale="small"):
    if scale == "production":
        return HeatedStrip(device, n=48, steps=60)
    return HeatedStrip(device, n=12, steps=8)
