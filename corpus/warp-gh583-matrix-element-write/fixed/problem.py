# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp


@wp.kernel
def place(y: wp.array(dtype=wp.mat22), x: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = wp.mat22(y[i][0, 0], x[i], y[i][1, 0], y[i][1, 1])


@wp.kernel
def total(y: wp.array(dtype=wp.mat22), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(out, 0, y[i][0, 0] + y[i][0, 1] + y[i][1, 0] + y[i][1, 1])


class Problem:
    def __init__(self, device):
        self.device = device
        self.n = 2
        self.params = {"x": wp.array(np.full(self.n, 3.0, dtype=np.float32), dtype=wp.float32, requires_grad=True,
                                     device=device)}

    def _run(self, out, requires_grad):
        y = wp.zeros(self.n, dtype=wp.mat22, requires_grad=requires_grad, device=self.device)
        wp.launch(place, self.n, inputs=[y, self.params["x"]], device=self.device)
        wp.launch(total, self.n, inputs=[y, out], device=self.device)

    def objective(self):
        out = wp.zeros(1, dtype=wp.float32, device=self.device)
        self._run(out, False)
        return float(out.numpy()[0])

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        out = wp.zeros(1, dtype=wp.float32, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._run(out, True)
        tape.backward(out)
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
