# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp


@wp.kernel
def staircase_energy(x: wp.array(dtype=float), w: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    cell = wp.floor(x[i])
    y[i] = w[i] * cell + x[i] * x[i]


X0 = [0.6, 1.7, 2.2, 3.9]
W0 = [2.5, 1.5, 3.0, 0.5]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {
            "x": wp.array(np.array(X0, dtype=np.float32), dtype=float, requires_grad=True, device=device),
            "w": wp.array(np.array(W0, dtype=np.float32), dtype=float, requires_grad=True, device=device),
        }

    def objective(self):
        y = wp.zeros(len(X0), dtype=float, device=self.device)
        wp.launch(staircase_energy, dim=len(X0), inputs=[self.params["x"], self.params["w"], y], device=self.device)
        return float(np.sum(y.numpy().astype(np.float64)))

    def gradient(self):
        for p in self.params.values():
            p.grad.zero_()
        y = wp.zeros(len(X0), dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(staircase_energy, dim=len(X0), inputs=[self.params["x"], self.params["w"], y],
                      device=self.device)
        tape.backward(grads={y: wp.array(np.ones(len(X0), dtype=np.float32), dtype=float, device=self.device)})
        return {k: p.grad.numpy().copy() for k, p in self.params.items()}


def make_problem(device, scale="small"):
    return Problem(device)
