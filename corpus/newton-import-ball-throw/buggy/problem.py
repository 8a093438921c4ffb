# SPDX-License-Identifier: Apache-2.0
# gjk.py is adapted from newton-physics/newton newton/geometry/gjk.py (Apache License 2.0).

import numpy as np
import warp as wp

import gjk  # noqa: F401

STEPS = 40
DT = 1.0 / 60.0


@wp.kernel
def step_kernel(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    drag: float,
    dt: float,
    x_new: wp.array(dtype=wp.vec3),
    v_new: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    vel = v[i]
    acc = wp.vec3(0.0, -9.81, 0.0) - drag * wp.length(vel) * vel
    v1 = vel + acc * dt
    v_new[i] = v1
    x_new[i] = x[i] + v1 * dt


@wp.kernel
def target_loss(x: wp.array(dtype=wp.vec3), target: wp.vec3, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target
    wp.atomic_add(loss, 0, wp.dot(d, d))


class BallThrow:
    def __init__(self, device):
        self.device = device
        self.target = wp.vec3(2.0, 0.5, 0.3)
        self.drag = 0.05
        self.params = {"launch_velocity": wp.array([(3.0, 4.0, 0.5)], dtype=wp.vec3, device=device,
                                                   requires_grad=True)}

    def _rollout(self, loss, requires_grad):
        x = wp.zeros(1, dtype=wp.vec3, device=self.device, requires_grad=requires_grad)
        v = self.params["launch_velocity"]
        for _ in range(STEPS):
            x_new = wp.zeros(1, dtype=wp.vec3, device=self.device, requires_grad=requires_grad)
            v_new = wp.zeros(1, dtype=wp.vec3, device=self.device, requires_grad=requires_grad)
            wp.launch(step_kernel, dim=1, inputs=[x, v, self.drag, DT], outputs=[x_new, v_new], device=self.device)
            x, v = x_new, v_new
        wp.launch(target_loss, dim=1, inputs=[x, self.target], outputs=[loss], device=self.device)

    def objective(self):
        loss = wp.zeros(1, dtype=float, device=self.device)
        self._rollout(loss, False)
        return float(loss.numpy()[0])

    def gradient(self):
        p = self.params["launch_velocity"]
        p.grad.zero_()
        loss = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)
        tape = wp.Tape()
        with tape:
            self._rollout(loss, True)
        tape.backward(loss=loss)
        return {"launch_velocity": p.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return BallThrow(device)
