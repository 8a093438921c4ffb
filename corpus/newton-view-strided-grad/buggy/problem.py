# SPDX-FileCopyrightText: Copyright (c) 2025 The Newton Developers
# SPDX-License-Identifier: Apache-2.0
# Adapted from newton-physics/newton newton/_src/utils/selection.py and
# newton/tests/test_selection.py (Apache License 2.0).

import numpy as np
import warp as wp

DOF_COUNT = 9
WORLD_COUNT, COUNT_PER_WORLD = 1, 1
OFFSET, VALUE_COUNT = 6, 3
STRIDE_BETWEEN_WORLDS = STRIDE_WITHIN_WORLDS = DOF_COUNT


@wp.kernel
def _sum_float_3d_kernel(src: wp.array3d(dtype=float), out: wp.array(dtype=float)):
    i, j, k = wp.tid()
    wp.atomic_add(out, 0, src[i, j, k])


def get_dof_velocities(attrib):
    value_stride = attrib.strides[0]
    shape = (WORLD_COUNT, COUNT_PER_WORLD, VALUE_COUNT)
    strides = (
        STRIDE_BETWEEN_WORLDS * value_stride,
        STRIDE_WITHIN_WORLDS * value_stride,
        value_stride,
    )

    # construct reshaped attribute array
    attrib = wp.array(
        ptr=int(attrib.ptr) + OFFSET * value_stride,
        dtype=attrib.dtype,
        shape=shape,
        strides=strides,
        device=attrib.device,
        copy=False,
    )
    return attrib


class Problem:
    def __init__(self, device):
        self.device = device
        self.params = {"joint_qd": wp.array(np.linspace(0.5, 2.5, DOF_COUNT, dtype=np.float32), dtype=float,
                                            requires_grad=True, device=device)}

    def _run(self, loss):
        result = get_dof_velocities(self.params["joint_qd"])
        wp.launch(_sum_float_3d_kernel, dim=result.shape, inputs=[result], outputs=[loss], device=self.device)

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._run(loss)
        return float(loss.numpy()[0])

    def gradient(self):
        qd = self.params["joint_qd"]
        qd.grad.zero_()
        loss = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            self._run(loss)
        tape.backward(loss=loss)
        return {"joint_qd": qd.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
