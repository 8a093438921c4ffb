import numpy as np
import warp as wp


@wp.kernel
def scale(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * s


@wp.kernel
def step(x: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.float64), x_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x_out[i] = x[i] - wp.float64(0.1) * k[i] * x[i] * x[i]


@wp.kernel
def total(y: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i] * y[i])


class Basic:
    def __init__(self, device):
        self.device = device
        self.n = 3
        self.steps = 3
        self.k = wp.array([1.0, 2.0, 3.0], dtype=wp.float64, device=device, requires_grad=True)
        self.x0 = wp.array([0.5, 0.7, 0.9], dtype=wp.float64, device=device)
        self.params = {"k": self.k}
        self.tape = wp.Tape()

    def forward(self):
        xs = [wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True) for _ in range(self.steps + 1)]
        wp.copy(xs[0], self.x0)
        for t in range(self.steps):
            wp.launch(step, dim=self.n, inputs=[xs[t], self.k], outputs=[xs[t + 1]], device=self.device)
        y = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(scale, dim=self.n, inputs=[xs[self.steps], wp.float64(2.0)], outputs=[y], device=self.device)
        wp.launch(total, dim=self.n, inputs=[y], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            loss = self.forward()
        self.tape.backward(loss)
        g = {"k": self.k.grad.numpy().copy()}
        self.tape.zero()
        return g


def make_problem(device, scale="small"):
    return Basic(device)
