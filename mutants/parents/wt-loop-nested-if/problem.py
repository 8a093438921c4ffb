import numpy as np
import warp as wp


@wp.kernel
def banded_sum(x: wp.array(dtype=wp.float64), s: wp.array(dtype=wp.float64)):
    j = wp.tid()
    acc = wp.float64(0.0)
    for i in range(6):
        v = x[j * 6 + i]
        if i < 3:
            if i < 1:
                acc = acc + v * wp.float64(2.0)
            else:
                acc = acc + v * v
        else:
            acc = acc * wp.float64(0.5) + v * wp.float64(3.0)
    s[j] = acc


@wp.kernel
def squared(s: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    wp.atomic_add(loss, 0, s[j] * s[j])


class NestedIf:
    def __init__(self, device, m):
        self.device = device
        self.m = m
        self.x = wp.array(np.cos(np.arange(6 * m)), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"x": self.x}
        self.tape = wp.Tape()

    def forward(self):
        s = wp.zeros(self.m, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(banded_sum, dim=self.m, inputs=[self.x], outputs=[s], device=self.device)
        wp.launch(squared, dim=self.m, inputs=[s], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            loss = self.forward()
        self.tape.backward(loss)
        g = {"x": self.x.grad.numpy().copy()}
        self.tape.zero()
        return g


def make_problem(device, scale="small"):
    return NestedIf(device, 16 if scale == "production" else 2)
