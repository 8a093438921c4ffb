# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_composite_component_adjoint.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.struct
class Scalar:
    a: wp.float32
    b: wp.float32


@wp.kernel
def seed_scalar_grad(g: wp.array(dtype=Scalar), a_val: wp.float32, b_val: wp.float32):
    i = wp.tid()
    g[i] = Scalar(a_val, b_val)


@wp.kernel
def k(y: wp.array(dtype=Scalar), x: wp.array(dtype=wp.float32)):
    i = wp.tid()
    y[i] = Scalar(x[i], 0.0)


N = 3


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"x": wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), dtype=wp.float32,
                                     requires_grad=True, device=device)}

    def objective(self):
        y = wp.zeros(N, dtype=Scalar, device=self.device)
        wp.launch(k, N, inputs=[y, self.params["x"]], device=self.device)
        return float(np.sum(y.numpy()["a"].astype(np.float64)))

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        y = wp.zeros(N, dtype=Scalar, requires_grad=True, device=self.device)
        wp.launch(seed_scalar_grad, N, inputs=[y.grad, 1.0, 0.0], device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(k, N, inputs=[y, x], device=self.device)
        tape.backward()
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
