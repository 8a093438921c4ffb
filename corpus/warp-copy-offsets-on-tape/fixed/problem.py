# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp

N = 6
OFFSET, COUNT = 2, 3


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.kernel
def move(x: wp.array(dtype=float), y: wp.array(dtype=float), offset: int):
    i = wp.tid()
    y[i + offset] = x[i + offset]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"x": wp.array(np.arange(1.0, N + 1.0, dtype=np.float32), dtype=float, requires_grad=True,
                                     device=device)}
        self.weights = np.arange(1.0, N + 1.0)

    def _run(self, requires_grad):
        src = wp.zeros(N, dtype=float, requires_grad=requires_grad, device=self.device)
        dst = wp.zeros(N, dtype=float, requires_grad=requires_grad, device=self.device)
        wp.launch(square, N, inputs=[self.params["x"], src], device=self.device)
        wp.launch(move, COUNT, inputs=[src, dst, OFFSET], device=self.device)
        return dst

    def objective(self):
        return float(np.dot(self.weights, self._run(False).numpy().astype(np.float64)))

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        tape = wp.Tape()
        with tape:
            dst = self._run(True)
        tape.backward(grads={dst: wp.array(self.weights.astype(np.float32), dtype=float, device=self.device)})
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
