# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_tape.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def mul_constant(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    tid = wp.tid()
    y[tid] = x[tid] * 2.0


@wp.kernel
def copy_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    tid = wp.tid()
    y[tid] = x[tid]


@wp.kernel
def sum_kernel(x: wp.array(dtype=float), total: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(total, 0, x[tid])


class Problem:
    def __init__(self, device, n=4):
        self.device = device
        self.n = n
        self.params = {"x": wp.array(np.arange(1.0, n + 1), dtype=float, requires_grad=True, device=device)}

    def _forward(self, loss, requires_grad):
        x = self.params["x"]
        doubled = wp.zeros(self.n, dtype=float, requires_grad=requires_grad, device=self.device)
        cloned = wp.zeros(self.n, dtype=float, requires_grad=requires_grad, device=self.device)
        wp.launch(copy_kernel, dim=self.n, inputs=[x, cloned], device=self.device)
        wp.launch(mul_constant, dim=self.n, inputs=[x, doubled], device=self.device)
        wp.launch(sum_kernel, dim=self.n, inputs=[doubled], outputs=[loss], device=self.device)
        wp.launch(sum_kernel, dim=self.n, inputs=[cloned], outputs=[loss], device=self.device)

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._forward(loss, False)
        return float(loss.numpy()[0])

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        loss = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._forward(loss, True)
        tape.backward(loss)
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
