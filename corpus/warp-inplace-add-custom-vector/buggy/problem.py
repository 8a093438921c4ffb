# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_array.py (Apache License 2.0).

import numpy as np
import warp as wp

vec9 = wp.types.vector(length=9, dtype=float)


@wp.kernel
def inplace_add_custom_vec(x: wp.array(dtype=vec9), y: wp.array(dtype=vec9)):
    i = wp.tid()
    x[i] += y[i]
    x[i] += y[i]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"y": wp.array(np.ones((1, 9), dtype=np.float32), dtype=vec9, requires_grad=True, device=device)}

    def objective(self):
        x = wp.zeros(1, dtype=vec9, device=self.device)
        wp.launch(inplace_add_custom_vec, 1, inputs=[x, self.params["y"]], device=self.device)
        return float(np.sum(x.numpy().astype(np.float64)))

    def gradient(self):
        y = self.params["y"]
        y.grad.zero_()
        x = wp.zeros(1, dtype=vec9, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(inplace_add_custom_vec, 1, inputs=[x, y], device=self.device)
        tape.backward(grads={x: wp.array(np.ones((1, 9), dtype=np.float32), dtype=vec9, device=self.device)})
        return {"y": y.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
