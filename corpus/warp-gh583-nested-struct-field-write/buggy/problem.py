# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp


@wp.struct
class Inner:
    a: wp.float32
    b: wp.float32


@wp.struct
class Outer:
    inner: Inner
    tag: wp.float32


@wp.kernel
def place(out: wp.array(dtype=Outer), src: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i].inner.a = src[i]


@wp.kernel
def total(out: wp.array(dtype=Outer), loss: wp.array(dtype=wp.float32)):
    i = wp.tid()
    wp.atomic_add(loss, 0, out[i].inner.a + out[i].inner.b + out[i].tag)


class Problem:
    def __init__(self, device):
        self.device = device
        self.n = 3
        self.params = {"src": wp.array(np.ones(self.n, dtype=np.float32), dtype=wp.float32, requires_grad=True,
                                       device=device)}

    def _run(self, loss, requires_grad):
        out = wp.zeros(self.n, dtype=Outer, requires_grad=requires_grad, device=self.device)
        wp.launch(place, self.n, inputs=[out, self.params["src"]], device=self.device)
        wp.launch(total, self.n, inputs=[out, loss], device=self.device)

    def objective(self):
        loss = wp.zeros(1, dtype=wp.float32, device=self.device)
        self._run(loss, False)
        return float(loss.numpy()[0])

    def gradient(self):
        src = self.params["src"]
        src.grad.zero_()
        loss = wp.zeros(1, dtype=wp.float32, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._run(loss, True)
        tape.backward(loss)
        return {"src": src.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
