# SPDX-FileCopyrightText: Copyright (c) 2025 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_vec.py, test_quat.py, test_mat.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def scalar_vec_div(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = wp.cw_div(wp.vec3(1.0, 1.0, 1.0), x[i])


@wp.kernel
def scalar_quat_div(x: wp.array(dtype=wp.quat), y: wp.array(dtype=wp.quat)):
    i = wp.tid()
    q = x[i]
    y[i] = wp.quat(1.0 / q[0], 1.0 / q[1], 1.0 / q[2], 1.0 / q[3])


@wp.kernel
def scalar_mat_div(x: wp.array(dtype=wp.mat22), y: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    m = x[i]
    y[i] = wp.mat22(1.0 / m[0, 0], 1.0 / m[0, 1], 1.0 / m[1, 0], 1.0 / m[1, 1])


KERNELS = {"vec": (scalar_vec_div, wp.vec3, 3), "quat": (scalar_quat_div, wp.quat, 4), "mat": (scalar_mat_div, wp.mat22, 4)}
START = {"vec": [[1.0, 2.0, 4.0]], "quat": [[1.0, 2.0, 4.0, 8.0]], "mat": [[[1.0, 2.0], [4.0, 8.0]]]}


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {k: wp.array(np.array(v, dtype=np.float32), dtype=KERNELS[k][1], requires_grad=True,
                                   device=device) for k, v in START.items()}

    def _outputs(self, requires_grad):
        return {k: wp.zeros(1, dtype=KERNELS[k][1], requires_grad=requires_grad, device=self.device)
                for k in self.params}

    def objective(self):
        ys = self._outputs(False)
        for k, x in self.params.items():
            wp.launch(KERNELS[k][0], 1, inputs=(x,), outputs=(ys[k],), device=self.device)
        return float(sum(np.sum(y.numpy().astype(np.float64)) for y in ys.values()))

    def gradient(self):
        for x in self.params.values():
            x.grad.zero_()
        ys = self._outputs(True)
        tape = wp.Tape()
        with tape:
            for k, x in self.params.items():
                wp.launch(KERNELS[k][0], 1, inputs=(x,), outputs=(ys[k],), device=self.device)
        for k, y in ys.items():
            y.grad = wp.array(np.ones((1,) + y.numpy().shape[1:], dtype=np.float32), dtype=KERNELS[k][1],
                              device=self.device)
        tape.backward()
        return {k: x.grad.numpy().copy() for k, x in self.params.items()}


def make_problem(device, scale="small"):
    return Problem(device)
