# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp
import warp.fem as fem

N = 4


def _view(temporary):
    # a Temporary handle on older releases, the borrowed array itself on newer ones
    return getattr(temporary, "array", temporary)


@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 3.0 * x[i]


@wp.kernel
def square_sum(y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, y[i] * y[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.store = fem.TemporaryStore()
        self.rest = wp.zeros(N, dtype=float, device=device)
        self.params = {"x": wp.array(np.arange(1, N + 1, dtype=np.float32), requires_grad=True, device=device)}

    def _run(self, loss):
        y = fem.borrow_temporary(self.store, shape=N, dtype=float, requires_grad=True, device=self.device)
        _view(y).grad.zero_()
        wp.launch(scale, N, inputs=[self.params["x"]], outputs=[_view(y)], device=self.device)
        wp.launch(square_sum, N, inputs=[_view(y)], outputs=[loss], device=self.device)
        w = fem.borrow_temporary(self.store, shape=N, dtype=float, device=self.device)
        y.release()
        wp.launch(scale, N, inputs=[self.rest], outputs=[_view(w)], device=self.device)
        self.rest_scaled = _view(w).numpy().copy()
        w.release()

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._run(loss)
        return float(loss.numpy()[0])

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        loss = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._run(loss)
        tape.backward(loss=loss)
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
