import numpy as np
import warp as wp


@wp.func
def sigmoid(x: wp.float64):
    return wp.float64(1.0) / (wp.float64(1.0) + wp.exp(-x))


@wp.func_grad(sigmoid)
def adj_sigmoid(x: wp.float64, adj: wp.float64):
    wp.adjoint[x] += adj * sigmoid(x) * (wp.float64(1.0) - sigmoid(x))


@wp.kernel
def activate(w: wp.array(dtype=wp.float64), u: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = sigmoid(w[i] * u[i])


@wp.kernel
def cross_entropy(y: wp.array(dtype=wp.float64), label: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = y[i] - label[i]
    wp.atomic_add(loss, 0, d * d)


class SigmoidFit:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.w = wp.array(np.linspace(-0.5, 0.7, n), dtype=wp.float64, device=device, requires_grad=True)
        self.u = wp.array(np.linspace(0.5, 2.0, n), dtype=wp.float64, device=device)
        self.label = wp.array((np.arange(n) % 2).astype(np.float64), dtype=wp.float64, device=device)
        self.params = {"w": self.w}

    def forward(self):
        y = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(activate, dim=self.n, inputs=[self.w, self.u], outputs=[y], device=self.device)
        wp.launch(cross_entropy, dim=self.n, inputs=[y, self.label], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"w": self.w.grad.numpy().copy()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return SigmoidFit(device, 256 if scale == "production" else 6)
