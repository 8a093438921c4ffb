# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_array.py (Apache License 2.0).

import numpy as np
import warp as wp

N = 3


@wp.kernel
def inplace_add_1d(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    x[i] += y[i]


@wp.kernel
def inplace_sub_1d(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    x[i] -= y[i]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {k: wp.array(np.ones(N, dtype=np.float32), dtype=float, requires_grad=True, device=device)
                       for k in ("x_add", "y_add", "x_sub", "y_sub")}

    def _launch(self, xa, xs):
        wp.launch(inplace_add_1d, N, inputs=[xa, self.params["y_add"]], device=self.device)
        wp.launch(inplace_sub_1d, N, inputs=[xs, self.params["y_sub"]], device=self.device)

    def objective(self):
        xa = wp.array(self.params["x_add"].numpy(), dtype=float, device=self.device)
        xs = wp.array(self.params["x_sub"].numpy(), dtype=float, device=self.device)
        self._launch(xa, xs)
        return float(np.sum(xa.numpy().astype(np.float64)) + np.sum(xs.numpy().astype(np.float64)))

    def gradient(self):
        saved = {k: a.numpy().copy() for k, a in self.params.items()}
        for a in self.params.values():
            a.grad.zero_()
        xa, xs = self.params["x_add"], self.params["x_sub"]
        tape = wp.Tape()
        with tape:
            self._launch(xa, xs)
        ones = np.ones(N, dtype=np.float32)
        tape.backward(grads={xa: wp.array(ones, dtype=float, device=self.device),
                             xs: wp.array(ones, dtype=float, device=self.device)})
        grads = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        for k, a in self.params.items():
            a.assign(saved[k])
        return grads


def make_problem(device, scale="small"):
    return Problem(device)
