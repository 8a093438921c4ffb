# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_noise.py (Apache License 2.0).

import numpy as np
import warp as wp

SEED = 42
W = wp.vec2(1.0, -0.5)
POSITIONS = [[0.17, 0.23], [1.33, 2.77], [-0.43, 0.61], [3.19, -2.11]]


@wp.kernel
def curlnoise_2d_loss(seed: int, xy: wp.array(dtype=wp.vec2), w: wp.vec2, loss: wp.array(dtype=float)):
    tid = wp.tid()
    state = wp.rand_init(seed)
    v = wp.curlnoise(state, xy[tid])
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
