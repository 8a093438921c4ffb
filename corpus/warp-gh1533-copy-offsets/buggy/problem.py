# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_copy.py (Apache License 2.0).

import numpy as np
import warp as wp

N = 6
SRC_OFFSET, DEST_OFFSET, COUNT = 1, 3, 2


@wp.kernel
def move(src: wp.array(dtype=wp.float32), dst: wp.array(dtype=wp.float32)):
    i = wp.tid()
    dst[i] = src[i]


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"src": wp.array(np.arange(N, dtype=np.float32), requires_grad=True, device=device)}
        self.seed = np.arange(10, 10 + N, dtype=np.float32)

    def _run(self, dst):
        wp.copy(dst, self.params["src"], src_offset=SRC_OFFSET, dest_offset=DEST_OFFSET, count=COUNT)

    def objective(self):
        dst = wp.zeros(N, dtype=wp.float32, device=self.device)
        self._run(dst)
        return float(np.dot(self.seed.astype(np.float64), dst.numpy().astype(np.float64)))

    def gradient(self):
        src = self.params["src"]
        src.grad.zero_()
        dst = wp.zeros(N, dtype=wp.float32, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._run(dst)
        tape.backward(grads={dst: wp.array(self.seed, device=self.device)})
        return {"src": src.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
