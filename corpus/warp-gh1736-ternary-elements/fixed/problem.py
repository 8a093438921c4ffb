# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_conditional.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.kernel
def div_or_load(arr: wp.array(dtype=float), term: wp.array(dtype=float), flag: wp.bool, out: wp.array(dtype=float)):
    tid = wp.tid()
    if flag:
        out[tid] = arr[tid] / term[tid]
    else:
        out[tid] = arr[tid]


class Problem:
    def __init__(self, device, flag=False):
        self.device = device
        self.flag = flag
        self.params = {
            "arr": wp.array(np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32), dtype=float, requires_grad=True, device=device),
            "term": wp.array(np.full(4, 2.0, dtype=np.float32), dtype=float, requires_grad=True, device=device),
        }

    def objective(self):
        out = wp.zeros(4, dtype=float, device=self.device)
        wp.launch(div_or_load, dim=4, inputs=[self.params["arr"], self.params["term"], self.flag], outputs=[out],
                  device=self.device)
        return float(np.sum(out.numpy().astype(np.float64)))

    def gradient(self):
        for a in self.params.values():
            a.grad.zero_()
        out = wp.zeros(4, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(div_or_load, dim=4, inputs=[self.params["arr"], self.params["term"], self.flag], outputs=[out],
                      device=self.device)
        tape.backward(grads={out: wp.array(np.ones(4, dtype=np.float32), dtype=float, device=self.device)})
        return {k: a.grad.numpy().copy() for k, a in self.params.items()}


def make_problem(device, scale="small"):
    return Problem(device)
