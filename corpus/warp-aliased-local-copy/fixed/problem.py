# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_grad.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def power_kernel(a: wp.array(dtype=wp.float32), b: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    x = a[tid]

    y = x * x * x
    if x > 0.0:
        y = x * x

    b[tid] = y


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"a": wp.array([-1.0, 2.0, 3.0], dtype=wp.float32, requires_grad=True, device=device)}

    def objective(self):
        b = wp.zeros(3, dtype=wp.float32, device=self.device)
        wp.launch(power_kernel, 3, inputs=[self.params["a"], b], device=self.device)
        return float(np.sum(b.numpy().astype(np.float64)))

    def gradient(self):
        a = self.params["a"]
        a.grad.zero_()
        b = wp.zeros(3, dtype=wp.float32, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(power_kernel, 3, inputs=[a, b], device=self.device)
        b.grad = wp.array([1.0, 1.0, 1.0], dtype=wp.float32, device=self.device)
        tape.backward()
        return {"a": a.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
