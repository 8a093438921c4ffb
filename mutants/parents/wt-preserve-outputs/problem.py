import numpy as np
import warp as wp


@wp.kernel
def spread(x: wp.array(dtype=wp.float64), c: wp.array(dtype=wp.float64), s1: wp.array(dtype=wp.float64), s2: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    c[tid] = x[tid] * wp.float64(2.0)
    wp.atomic_add(s1, 0, x[tid] * wp.float64(3.0))
    wp.atomic_sub(s2, 0, x[tid] * x[tid])


@wp.kernel
def combine(c: wp.array(dtype=wp.float64), s1: wp.array(dtype=wp.float64), s2: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    wp.atomic_add(loss, 0, c[tid] * c[tid] * s1[0] + s2[0])


class PreserveOutputs:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.x = wp.array(np.linspace(-1.0, 1.3, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"x": self.x}

    def forward(self):
        c = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        s1 = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        s2 = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(spread, dim=self.n, inputs=[self.x], outputs=[c, s1, s2], device=self.device)
        wp.launch(combine, dim=self.n, inputs=[c, s1, s2], outputs=[loss], device=self.device)
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
    return PreserveOutputs(device, 128 if scale == "production" else 5)
