# SPDX-FileCopyrightText: Copyright (c) 2024 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/geometry/test_volume.py (Apache License 2.0).

import os

import numpy as np
import warp as wp

POINTS = [[8.871, -2.812, 5.696], [1.826, -4.113, 8.455], [7.387, -2.717, 9.464], [-5.51, 6.11, 3.618]]


@wp.kernel
def sample_local_v_linear_values(volume: wp.uint64, points: wp.array(dtype=wp.vec3), values: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    p = points[tid]
    i0 = int(wp.floor(p[0]))
    j0 = int(wp.floor(p[1]))
    k0 = int(wp.floor(p[2]))
    fx = p[0] - wp.floor(p[0])
    fy = p[1] - wp.floor(p[1])
    fz = p[2] - wp.floor(p[2])
    v = wp.vec3(0.0, 0.0, 0.0)
    for c in range(8):
        di = float(c % 2)
        dj = float((c / 2) % 2)
        dk = float(c / 4)
        w = (di * fx + (1.0 - di) * (1.0 - fx)) * (dj * fy + (1.0 - dj) * (1.0 - fy)) * (dk * fz + (1.0 - dk) * (1.0 - fz))
        v = v + w * wp.volume_lookup_v(volume, i0 + c % 2, j0 + (c / 2) % 2, k0 + c / 4)
    ones = wp.vec3(1.0, 1.0, 1.0)
    values[tid] = wp.dot(v, ones)


def _load_volume(device):
    path = os.path.join(os.path.dirname(wp.__file__), "tests", "assets", "test_vec_grid.nvdb")
    with open(path, "rb") as f:
        return wp.Volume.load_from_nvdb(f, device=device)


class Problem:
    def __init__(self, device):
        self.device = device
        self.volume = _load_volume(device)
        self.params = {"uvws": wp.array(np.array(POINTS, dtype=np.float32), dtype=wp.vec3, requires_grad=True,
                                        device=device)}

    def _launch(self, values):
        uvws = self.params["uvws"]
        wp.launch(sample_local_v_linear_values, dim=uvws.shape[0], inputs=[self.volume.id, uvws, values],
                  device=self.device)

    def objective(self):
        values = wp.zeros(len(POINTS), dtype=wp.float32, device=self.device)
        self._launch(values)
        return float(np.sum(values.numpy().astype(np.float64)))

    def gradient(self):
        self.params["uvws"].grad.zero_()
        values = wp.zeros(len(POINTS), dtype=wp.float32, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._launch(values)
        tape.backward(grads={values: wp.array(np.ones(len(POINTS), dtype=np.float32), device=self.device)})
        return {"uvws": self.params["uvws"].grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
