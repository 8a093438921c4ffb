# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_vec.py (Apache License 2.0).

import numpy as np
import warp as wp

vec2 = wp.types.vector(length=2, dtype=wp.float32)
vec3 = wp.types.vector(length=3, dtype=wp.float32)
vec4 = wp.types.vector(length=4, dtype=wp.float32)


@wp.kernel
def vectest_read_write_store(
    x: wp.array(dtype=wp.float32), a: wp.array(dtype=vec2), b: wp.array(dtype=vec3), c: wp.array(dtype=vec4)
):
    tid = wp.tid()

    t = a[tid]
    t[0] = x[tid]
    a[tid] = t

    u = b[tid]
    u[1] = x[tid]
    b[tid] = u

    v = c[tid]
    v[2] = x[tid]
    c[tid] = v


@wp.kernel
def vectest_component(x: wp.array(dtype=vec3), y: wp.array(dtype=wp.float32)):
    i = wp.tid()

    a = vec3(wp.float32(0.0))
    a.x = wp.float32(1.0) * y[i]
    a.y = wp.float32(2.0) * y[i]
    a.z = wp.float32(3.0) * y[i]
    x[i] = a


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {
            "x": wp.array(np.full(1, 2.0, dtype=np.float32), dtype=wp.float32, requires_grad=True, device=device),
            "y": wp.array(np.ones(1, dtype=np.float32), dtype=wp.float32, requires_grad=True, device=device),
        }

    def _run(self, requires_grad):
        d = self.device
        a = wp.array(np.ones((1, 2), dtype=np.float32), dtype=vec2, requires_grad=requires_grad, device=d)
        b = wp.array(np.ones((1, 3), dtype=np.float32), dtype=vec3, requires_grad=requires_grad, device=d)
        c = wp.array(np.ones((1, 4), dtype=np.float32), dtype=vec4, requires_grad=requires_grad, device=d)
        out = wp.zeros(1, dtype=vec3, requires_grad=requires_grad, device=d)
        wp.launch(vectest_read_write_store, dim=1, inputs=[self.params["x"], a, b, c], device=d)
        wp.launch(vectest_component, dim=1, inputs=[out, self.params["y"]], device=d)
        return [a, b, c, out]

    def objective(self):
        return float(sum(np.sum(o.numpy().astype(np.float64)) for o in self._run(False)))

    def gradient(self):
        for p in self.params.values():
            p.grad.zero_()
        tape = wp.Tape()
        with tape:
            outs = self._run(True)
        tape.backward(grads={o: wp.array(np.ones(o.numpy().shape, dtype=np.float32), dtype=o.dtype, device=self.device)
                             for o in outs})
        return {k: p.grad.numpy().copy() for k, p in self.params.items()}


def make_problem(device, scale="small"):
    return Problem(device)
