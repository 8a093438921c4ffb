import numpy as np
import warp as wp

W = 64
H = 64


@wp.kernel
def shade(gain: wp.array(dtype=wp.float32), target: wp.array(dtype=wp.float32), err: wp.array(dtype=wp.float32)):
    i = wp.tid()
    row = i // W
    d = gain[row] * (1.0 + 0.01 * float(i % W)) - target[i]
    err[i] = d * d


class Problem:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(7)
        self.gain = wp.array(rng.uniform(0.8, 1.2, H).astype(np.float32), dtype=wp.float32, requires_grad=True,
                             device=device)
        self.target = wp.array(rng.uniform(0.5, 1.5, W * H).astype(np.float32), dtype=wp.float32, device=device)
        self.params = {"gain": self.gain}

    def _err(self, rg):
        err = wp.zeros(W * H, dtype=wp.float32, requires_grad=rg, device=self.device)
        wp.launch(shade, dim=W * H, inputs=[self.gain, self.target, err], device=self.device)
        return err

    def objective(self):
        return float(np.mean(self._err(False).numpy().astype(np.float64)))

    def gradient(self):
        tape = wp.Tape()
        with tape:
            err = self._err(True)
        tape.backward(grads={err: wp.ones(W * H, dtype=wp.float32, device=self.device)})
        g = self.gain.grad.numpy().copy()
        tape.zero()
        return {"gain": g}


def make_problem(device, scale="small"):
    return Problem(device)
