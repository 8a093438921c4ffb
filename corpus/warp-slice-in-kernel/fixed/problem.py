# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_grad.py (Apache License 2.0).

import numpy as np
import warp as wp

ROW = 1


@wp.kernel
def square_slice_2d_kernel(x: wp.array2d(dtype=float), y: wp.array2d(dtype=float), row_idx: int):
    tid = wp.tid()
    y[row_idx, tid] = x[row_idx, tid] ** 2.0


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"a": wp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=float, requires_grad=True, device=device)}

    def objective(self):
        b = wp.zeros((3, 2), dtype=float, device=self.device)
        wp.launch(square_slice_2d_kernel, dim=2, inputs=[self.params["a"], b, ROW], device=self.device)
        return float(np.sum(b.numpy().astype(np.float64)))

    def gradient(self):
        a = self.params["a"]
        a.grad.zero_()
        b = wp.zeros((3, 2), dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(square_slice_2d_kernel, dim=2, inputs=[a, b, ROW], device=self.device)
        b.grad = wp.array(np.ones((3, 2), dtype=np.float32), dtype=float, device=self.device)
        tape.backward()
        return {"a": a.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
