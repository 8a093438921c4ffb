# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_grad.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def square_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    tid = wp.tid()
    y[tid] = x[tid] ** 2.0


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"a": wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), dtype=float, requires_grad=True,
                                     device=device)}

    def objective(self):
        a = self.params["a"]
        b = wp.zeros(a.shape[0], dtype=float, device=self.device)
        wp.launch(square_kernel, dim=a.shape[0], inputs=[a, b], device=self.device)
        return float(np.sum(b.numpy().astype(np.float64)))

    def gradient(self):
        a = self.params["a"]
        a.grad.zero_()
        b = wp.zeros(a.shape[0], dtype=float, requires_grad=True, device=self.device)
        wp.launch(square_kernel, dim=a.shape[0], inputs=[a, b], device=self.device)
        b.grad = wp.array(np.ones(a.shape[0], dtype=np.float32), dtype=float, device=self.device)
        wp.launch(square_kernel, dim=a.shape[0], inputs=[a, b], adjoint=True, adj_inputs=[None, None],
                  device=self.device)
        return {"a": a.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
