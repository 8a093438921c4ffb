# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_array.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def multiply_by_two(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    a = x[i]
    b = 2.0 * a
    y[i] = b


@wp.kernel
def multiply_by_three(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    c = x[i]
    d = 3.0 * c
    y[i] = d


N = 10


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {
            "x_a": wp.array(np.ones(N, dtype=np.float32), dtype=float, requires_grad=True, device=device),
            "x_b": wp.array(np.ones(N, dtype=np.float32), dtype=float, requires_grad=True, device=device),
        }

    def _forward(self, y):
        z = wp.zeros(N, dtype=float, requires_grad=y.requires_grad, device=self.device)
        wp.launch(multiply_by_two, dim=N, inputs=[self.params["x_a"], z], device=self.device)
        wp.launch(multiply_by_three, dim=N, inputs=[self.params["x_b"], y], device=self.device)

    def objective(self):
        y = wp.zeros(N, dtype=float, device=self.device)
        self._forward(y)
        return float(np.sum(y.numpy().astype(np.float64)))

    def gradient(self):
        for p in self.params.values():
            p.grad.zero_()
        y = wp.zeros(N, dtype=float, requires_grad=True, device=self.device)
        with wp.Tape() as tape:
            self._forward(y)
        tape.backward(grads={y: wp.array(np.ones(N, dtype=np.float32), dtype=float, device=self.device)})
        return {k: p.grad.numpy().copy() for k, p in self.params.items()}


def make_problem(device, scale="small"):
    return Problem(device)
