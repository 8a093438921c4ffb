# SPDX-FileCopyrightText: Copyright (c) 2022 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/interop/test_torch.py (Apache License 2.0).

import numpy as np
import warp as wp

N = 10


@wp.kernel
def vec_sum_kernel(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3), z: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    z[tid] = x[tid] + y[tid]


@wp.kernel
def square_norm_kernel(z: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    wp.atomic_add(loss, 0, wp.dot(z[tid], z[tid]))


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = np.ones((N, 3), dtype=np.float32)
        self.params = {"y": wp.array(np.ones((N, 3), dtype=np.float32), dtype=wp.vec3, requires_grad=True,
                                     device=device)}

    def _inputs(self):
        return self.x

    def _run(self, z, loss):
        wp.launch(vec_sum_kernel, dim=N, inputs=[self._inputs(), self.params["y"]], outputs=[z], device=self.device)
        wp.launch(square_norm_kernel, dim=N, inputs=[z], outputs=[loss], device=self.device)

    def objective(self):
        z = wp.zeros(N, dtype=wp.vec3, device=self.device)
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._run(z, loss)
        return float(loss.numpy()[0])

    def gradient(self):
        y = self.params["y"]
        y.grad.zero_()
        z = wp.zeros(N, dtype=wp.vec3, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._run(z, loss)
        tape.backward(loss=loss)
        return {"y": y.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
