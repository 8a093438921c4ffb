# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_tape.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def assign_chain_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float), z: wp.array(dtype=float)):
    tid = wp.tid()
    y[tid] = x[tid]
    z[tid] = y[tid]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"x": wp.array(np.arange(3), dtype=float, device=device, requires_grad=True)}

    def objective(self):
        x = self.params["x"]
        y = wp.zeros(3, dtype=float, device=self.device)
        z = wp.zeros(3, dtype=float, device=self.device)
        wp.launch(assign_chain_kernel, dim=3, inputs=[x, y, z], device=self.device)
        return float(np.sum(z.numpy().astype(np.float64)))

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        y = wp.zeros_like(x)
        z = wp.zeros_like(x)
        tape = wp.Tape()
        with tape:
            wp.launch(assign_chain_kernel, dim=3, inputs=[x, y, z], device=self.device)
        tape.backward(grads={y: wp.ones_like(x)})
        tape.zero()
        y.grad.zero_()
        tape.backward(grads={z: wp.ones_like(x)})
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
