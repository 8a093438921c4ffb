# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_composite_component_adjoint.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def k(y: wp.array(dtype=wp.vec3), x: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    y[tid] = wp.vec3(x[tid] * 2.0, x[tid] * 3.0, x[tid] * 4.0)


class Problem:
    def __init__(self, device, n=3):
        self.device = device
        self.n = n
        self.params = {"x": wp.array(np.ones(n, dtype=np.float32), dtype=wp.float32, requires_grad=True, device=device)}

    def objective(self):
        y = wp.zeros(self.n, dtype=wp.vec3, device=self.device)
        wp.launch(k, self.n, inputs=[y, self.params["x"]], device=self.device)
        return float(np.sum(y.numpy().astype(np.float64)))

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        y = wp.zeros(self.n, dtype=wp.vec3, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(k, self.n, inputs=[y, x], device=self.device)
        y.grad = wp.array(np.ones((self.n, 3), dtype=np.float32), dtype=wp.vec3, device=self.device)
        tape.backward()
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
