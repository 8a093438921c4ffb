import numpy as np
import warp as wp


@wp.kernel
def square(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def misfit(y: wp.array(dtype=wp.float64), target: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = y[i] - target[i]
    wp.atomic_add(loss, 0, d * d)


class ScalarChain:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.x = wp.array(np.linspace(0.5, 1.5, n), dtype=wp.float64, device=device, requires_grad=True)
        self.target = wp.array(np.linspace(0.2, 2.0, n), dtype=wp.float64, device=device)
        self.params = {"x": self.x}

    def forward(self):
        y = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(square, dim=self.n, inputs=[self.x], outputs=[y], device=self.device)
        wp.launch(misfit, dim=self.n, inputs=[y, self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"x": self.x.grad.numpy().copy()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return ScalarChain(device, 64 if scale == "production" else 6)
