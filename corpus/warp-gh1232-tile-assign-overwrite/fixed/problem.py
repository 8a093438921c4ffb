# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/tile/test_tile_view.py (Apache License 2.0).

import numpy as np
import warp as wp

TILE_M = wp.constant(8)
TILE_N = wp.constant(8)
COL_IDX = 5


@wp.kernel
def shared_assign_column_kernel(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float), col_idx: int):
    a = wp.tile_load(src, shape=(TILE_M, TILE_N), storage="shared")
    wp.tile_store(dst, a)


class Problem:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(42)
        src_np = rng.random((8, 8), dtype=np.float32)
        self.params = {"src": wp.array(src_np, dtype=float, requires_grad=True, device=device)}

    def _launch(self, dst):
        wp.launch_tiled(shared_assign_column_kernel, dim=[1], inputs=[self.params["src"], dst, COL_IDX],
                        block_dim=32, device=self.device)

    def objective(self):
        dst = wp.zeros((8, 8), dtype=float, device=self.device)
        self._launch(dst)
        return float(np.sum(dst.numpy().astype(np.float64)))

    def gradient(self):
        src = self.params["src"]
        src.grad.zero_()
        dst = wp.zeros((8, 8), dtype=float, requires_grad=True, device=self.device)
        with wp.Tape() as tape:
            self._launch(dst)
        dst.grad = wp.ones_like(dst, device=self.device)
        tape.backward()
        return {"src": src.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
