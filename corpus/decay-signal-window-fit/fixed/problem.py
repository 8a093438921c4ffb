import numpy as np
import warp as wp


@wp.kernel
def synthesize(
    coeffs: wp.array(dtype=wp.float64),
    dt: wp.float64,
    signal: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    time = dt * wp.float64(t)
    signal[t] = coeffs[0] * wp.exp(-coeffs[1] * time) + coeffs[2]


@wp.kernel
def gather(
    signal: wp.array(dtype=wp.float64),
    start: int,
    offset: int,
    frame: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    frame[offset + i] = signal[start + i]


@wp.kernel
def frame_loss(
    frame: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = frame[i] - measured[i]
    wp.atomic_add(loss, 0, d * d)


class Problem:
    def __init__(self, device, samples, start, count, pad):
        self.device = device
        self.samples = samples
        self.start = start
        self.count = count
        self.pad = pad
        self.frame_size = count + 2 * pad
        self.dt = 0.1
        self.params = {
            "coeffs": wp.array([1.5, 0.8, 0.1], dtype=wp.float64, device=device, requires_grad=True),
        }
        t = self.dt * (start + np.arange(count))
        true_coeffs = (2.0, 0.5, -0.2)
        values = true_coeffs[0] * np.exp(-true_coeffs[1] * t) + true_coeffs[2]
        frame_values = np.zeros(self.frame_size)
        frame_values[pad : pad + count] = values
        self.measured = wp.array(frame_values, dtype=wp.float64, device=device)
        self.signal = wp.zeros(samples, dtype=wp.float64, device=device, requires_grad=True)
        self.frame = wp.zeros(self.frame_size, dtype=wp.float64, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()

    def _forward(self):
        self.loss.zero_()
        wp.launch(
            synthesize,
            dim=self.samples,
            inputs=[self.params["coeffs"], wp.float64(self.dt)],
            outputs=[self.signal],
            device=self.device,
        )
        wp.launch(
            gather,
            dim=self.count,
            inputs=[self.signal, self.start, self.pad],
            outputs=[self.frame],
            device=self.device,
        )
        wp.launch(
            frame_loss,
            dim=self.frame_size,
            inputs=[self.frame, self.measured],
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

    def train(self, iterations, lr=0.05):
        losses = []
        coeffs = self.params["coeffs"]
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["coeffs"]
            coeffs.assign(coeffs.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, samples=256, start=96, count=64, pad=64)
    return Problem(device, samples=16, start=4, count=8, pad=2)
