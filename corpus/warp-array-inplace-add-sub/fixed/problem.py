# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_array.py (Apache License 2.0).

import numpy as np
import warp as wp

N = 3


@wp.kernel
def inplace_add_1d(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = x[i] + y[i]


@wp.kernel
def inplace_sub_1d(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = x[i] - y[i]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {k: wp.array(np.ones(N, dtype=np.float32), dtype=float, requires_grad=True, device=device)
                       for k in ("x_add", "y_add", "x_sub", "y_sub")}

    def _launch(self, xa, xs):
        za = wp.zeros(N, dtype=float, requires_grad=True, device=self.device)
        zs = wp.zeros(N, dtype=float, requires_grad=True, device=self.device)
        wp.launch(inplace_add_1d, N, inputs=[xa, self.params["y_add"], za], device=self.device)
        wp.launch(inplace_sub_1d, N, inputs=[xs, self.params["y_sub"], zs], device=self.device)
        return za, zs

    def objective(self):
        za, zs = self._launch(self.params["x_add"], self.params["x_sub"])
        return float(np.sum(za.numpy().astype(np.float64)) + np.sum(zs.numpy().astype(np.float64)))

    def gradient(self):
        saved = {k: a.numpy().copy() for k, a in self.params.items()}
        for a in self.params.values():
            a.grad.zero_()
        tape = wp.Tape()
        with tape:
            xa, xs = self._launch(self.params["x_add"], self.params["x_sub"])
        ones = np.ones(N, dtype=np.float32)
        tape.backward(grads={xa: wp.array(ones, dtype=float, device=self.device),
                             xs: wp.array(ones, dtype=float, device=self.device)})
        grads = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        for k, a in self.params.items():
            a.assign(saved[k])
        return grads


def make_problem(device, scale="small"):
    return Problem(device)
