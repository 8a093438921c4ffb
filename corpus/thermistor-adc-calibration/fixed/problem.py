import numpy as np
import warp as wp

ADC_FULL_SCALE = 4096.0


@wp.kernel
def scale_in_place(u: wp.array(dtype=wp.float64), factor: wp.float64):
    i = wp.tid()
    u[i] = u[i] * factor


@wp.kernel
def predict(
    u: wp.array(dtype=wp.float64),
    coeffs: wp.array(dtype=wp.float64),
    temp: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    s = u[i]
    temp[i] = coeffs[0] + s * (coeffs[1] + s * (coeffs[2] + s * coeffs[3]))


@wp.kernel
def mean_squared_error(
    temp: wp.array(dtype=wp.float64),
    reference: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = temp[i] - reference[i]
    wp.atomic_add(loss, 0, r * r / wp.float64(temp.shape[0]))


class ThermistorCalibration:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(7)
        counts = np.round(np.linspace(400.0, 3700.0, n) + rng.uniform(-20.0, 20.0, n))
        s = counts / ADC_FULL_SCALE
        reference = -12.0 + 95.0 * s - 40.0 * s ** 2 + 18.0 * s ** 3 + rng.normal(0.0, 0.2, n)
        self.readings = wp.array(counts, dtype=wp.float64, device=device)
        self.reference = wp.array(reference, dtype=wp.float64, device=device)
        self.coeffs = wp.array([-10.0, 80.0, -20.0, 5.0], dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"coeffs": self.coeffs}

    def rescale(self, factor):
        wp.launch(scale_in_place, dim=self.n, inputs=[self.readings, wp.float64(factor)], device=self.device)

    def forward(self):
        temp = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(predict, dim=self.n, inputs=[self.readings, self.coeffs], outputs=[temp], device=self.device)
        wp.launch(mean_squared_error, dim=self.n, inputs=[temp, self.reference], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        self.rescale(1.0 / ADC_FULL_SCALE)
        loss = self.forward()
        self.rescale(ADC_FULL_SCALE)
        return float(loss.numpy()[0])

    def gradient(self):
        self.rescale(1.0 / ADC_FULL_SCALE)
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        self.rescale(ADC_FULL_SCALE)
        grads = {"coeffs": self.coeffs.grad.numpy().copy()}
        tape.zero()
        return grads


def make_problem(device, scale="small"):
    if scale == "production":
        return ThermistorCalibration(device, n=64)
    return ThermistorCalibration(device, n=16)
