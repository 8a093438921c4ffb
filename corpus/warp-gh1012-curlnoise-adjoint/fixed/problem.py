# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_noise.py (Apache License 2.0).

import numpy as np
import warp as wp

SEED = 42
W = wp.vec2(1.0, -0.5)
POSITIONS = [[0.17, 0.23], [1.33, 2.77], [-0.43, 0.61], [3.19, -2.11]]


@wp.func
def corner_grad_2d(state: wp.uint32, ix: int, iy: int):
    idx = (wp.uint32(ix) * wp.uint32(73856093)) ^ (wp.uint32(iy) * wp.uint32(19349663) + state)
    x = wp.randf(idx) - 0.5
    y = wp.randf(idx) - 0.5
    return wp.normalize(wp.vec2(x, y))


@wp.func
def noise_2d_gradient(state: wp.uint32, x: float, y: float):
    ix0 = int(wp.floor(x))
    iy0 = int(wp.floor(y))
    ix1 = ix0 + 1
    iy1 = iy0 + 1
    dx = x - wp.floor(x)
    dy = y - wp.floor(y)

    g00 = corner_grad_2d(state, ix0, iy0)
    g10 = corner_grad_2d(state, ix1, iy0)
    g01 = corner_grad_2d(state, ix0, iy1)
    g11 = corner_grad_2d(state, ix1, iy1)

    v00 = dx * g00[0] + dy * g00[1]
    v10 = (dx - 1.0) * g10[0] + dy * g10[1]
    v01 = dx * g01[0] + (dy - 1.0) * g01[1]
    v11 = (dx - 1.0) * g11[0] + (dy - 1.0) * g11[1]

    s = dx * dx * dx * (dx * (dx * 6.0 - 15.0) + 10.0)
    s1 = 30.0 * dx * dx * (dx * (dx - 2.0) + 1.0)
    t = dy * dy * dy * (dy * (dy * 6.0 - 15.0) + 10.0)
    t1 = 30.0 * dy * dy * (dy * (dy - 2.0) + 1.0)

    xi0 = v00 + (v10 - v00) * s
    xi1 = v01 + (v11 - v01) * s

    gxi0_x = g00[0] + (g10[0] - g00[0]) * s + (v10 - v00) * s1
    gxi0_y = g00[1] + (g10[1] - g00[1]) * s
    gxi1_x = g01[0] + (g11[0] - g01[0]) * s + (v11 - v01) * s1
    gxi1_y = g01[1] + (g11[1] - g01[1]) * s

    gn_x = gxi0_x + (gxi1_x - gxi0_x) * t
    gn_y = gxi0_y + (gxi1_y - gxi0_y) * t + (xi1 - xi0) * t1
    return wp.vec2(gn_x, gn_y)


@wp.kernel
def curlnoise_2d_loss(seed: int, xy: wp.array(dtype=wp.vec2), w: wp.vec2, loss: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed)
    p = xy[tid]
    g = noise_2d_gradient(state, p[0], p[1])
    v = wp.vec2(-g[1], g[0])
    wp.atomic_add(loss, 0, v[0] * w[0] + v[1] * w[1])


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"xy": wp.array(np.array(POSITIONS, dtype=np.float32), dtype=wp.vec2, requires_grad=True,
                                      device=device)}

    def _launch(self, loss):
        xy = self.params["xy"]
        wp.launch(curlnoise_2d_loss, dim=xy.shape[0], inputs=[SEED, xy, W, loss], device=self.device)

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._launch(loss)
        return float(loss.numpy()[0])

    def gradient(self):
        self.params["xy"].grad.zero_()
        loss = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._launch(loss)
        tape.backward(loss=loss)
        return {"xy": self.params["xy"].grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
