# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp

N = 4


@wp.kernel
def place(m: wp.array(dtype=wp.mat22), x: wp.array(dtype=float), out: wp.array(dtype=wp.mat22)):
    t = wp.tile_load(m, shape=N)
    t[0][0, 1] = x[0] * 3.0
    wp.tile_store(out, t)


class Problem:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(3)
        self.params = {
            "m": wp.array(rng.uniform(0.5, 1.5, size=(N, 2, 2)).astype(np.float32), dtype=wp.mat22,
                          requires_grad=True, device=device),
            "x": wp.array(np.arange(1, N + 1, dtype=np.float32), dtype=float, requires_grad=True, device=device),
        }
        self.w = rng.uniform(0.5, 2.0, size=(N, 2, 2)).astype(np.float32)

    def _launch(self, out):
        wp.launch_tiled(place, dim=[1], inputs=[self.params["m"], self.params["x"], out], block_dim=N,
                        device=self.device)

    def objective(self):
        out = wp.zeros(N, dtype=wp.mat22, device=self.device)
        self._launch(out)
        return float(np.sum(self.w.astype(np.float64) * out.numpy().astype(np.float64)))

    def gradient(self):
        for a in self.params.values():
            a.grad.zero_()
        out = wp.zeros(N, dtype=wp.mat22, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._launch(out)
        tape.backward(grads={out: wp.array(self.w, dtype=wp.mat22, device=self.device)})
        return {k: a.grad.numpy().copy() for k, a in self.params.items()}


def make_problem(device, scale="small"):
    return Problem(device)
