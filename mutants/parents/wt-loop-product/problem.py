import numpy as np
import warp as wp


@wp.kernel
def window_product(x: wp.array(dtype=wp.float64), p: wp.array(dtype=wp.float64)):
    i = wp.tid()
    acc = wp.float64(1.0)
    for k in range(4):
        acc = acc * x[i * 4 + k]
    p[i] = acc


@wp.kernel
def total(p: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w[i] * p[i])


class LoopProduct:
    def __init__(self, device, m):
        self.device = device
        self.m = m
        self.x = wp.array(np.linspace(0.8, 1.4, 4 * m), dtype=wp.float64, device=device, requires_grad=True)
        self.w = wp.array(np.linspace(1.0, 2.0, m), dtype=wp.float64, device=device)
        self.p = wp.zeros(m, dtype=wp.float64, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"x": self.x}

    def forward(self):
        self.loss.zero_()
        wp.launch(window_product, dim=self.m, inputs=[self.x], outputs=[self.p], device=self.device)
        wp.launch(total, dim=self.m, inputs=[self.p, self.w], outputs=[self.loss], device=self.device)
        return self.loss

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
    return LoopProduct(device, 32 if scale == "production" else 3)
