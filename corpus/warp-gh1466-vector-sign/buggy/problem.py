# SPDX-License-Identifier: Apache-2.0

import numpy as np
import warp as wp


@wp.kernel
def energy(v: wp.array(dtype=wp.vec3), w: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.sign(v[i])
    wp.atomic_add(out, 0, wp.dot(w[i], s) + 0.5 * wp.dot(v[i], v[i]))


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"v": wp.array(np.array([[0.5, -1.0, 2.0], [-0.7, 0.3, -1.5]], dtype=np.float32), dtype=wp.vec3,
                                     requires_grad=True, device=device)}
        self.w = wp.array(np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], dtype=np.float32), dtype=wp.vec3, device=device)

    def objective(self):
        out = wp.zeros(1, dtype=float, device=self.device)
        wp.launch(energy, 2, inputs=[self.params["v"], self.w, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        v = self.params["v"]
        v.grad.zero_()
        out = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(energy, 2, inputs=[v, self.w, out], device=self.device)
        tape.backward(out)
        return {"v": v.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
