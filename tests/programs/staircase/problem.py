import numpy as np
import warp as wp


@wp.kernel
def quant(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    q = wp.round(x[i] * wp.float64(4.0)) / wp.float64(4.0)
    wp.atomic_add(out, 0, q * q)


class P:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([0.125, 0.9, -0.6]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(quant, dim=3, inputs=[self.x, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(quant, dim=3, inputs=[self.x, out], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return P(device)
