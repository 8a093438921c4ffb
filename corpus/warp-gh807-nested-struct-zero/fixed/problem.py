# SPDX-FileCopyrightText: Copyright (c) 2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved.
# SPDX-License-Identifier: Apache-2.0
# Adapted from NVIDIA/warp warp/tests/test_tape.py (Apache License 2.0).

import numpy as np
import warp as wp


@wp.struct
class NestedStruct:
    arr: wp.array(dtype=float)


@wp.struct
class WrapperStruct:
    nested: NestedStruct


@wp.kernel
def nested_loss_kernel(wrapper: WrapperStruct, loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wrapper.nested.arr[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.wrapper = WrapperStruct()
        self.wrapper.nested = NestedStruct()
        self.wrapper.nested.arr = wp.array(np.ones(1, dtype=np.float32), dtype=float, requires_grad=True, device=device)
        self.params = {"arr": self.wrapper.nested.arr}
        self.loss = wp.zeros(1, dtype=float, requires_grad=True, device=device)
        self.tape = wp.Tape()

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        wp.launch(nested_loss_kernel, dim=1, inputs=(self.wrapper, loss), device=self.device)
        return float(loss.numpy()[0])

    def gradient(self):
        self.loss.zero_()
        self.tape.reset()
        with self.tape:
            wp.launch(nested_loss_kernel, dim=1, inputs=(self.wrapper, self.loss), device=self.device)
        self.tape.backward(self.loss)
        g = self.params["arr"].grad.numpy().copy()
        self.tape.zero()
        self.params["arr"].grad.zero_()
        return {"arr": g}


def make_problem(device, scale="small"):
    return Problem(device)
