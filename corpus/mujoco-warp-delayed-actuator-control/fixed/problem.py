# SPDX-License-Identifier: Apache-2.0
# history.py and ad_flags.py are adapted from google-deepmind/mujoco_warp
# mujoco_warp/_src/history.py and mujoco_warp/_src/ad_flags.py
# (Copyright 2025 The Newton Developers, Apache License 2.0).

import os

os.environ.setdefault("MJWARP_ENABLE_AD", "1")

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

import history  # noqa: E402

NWORLD = 2
NU = 2
TIMESTEP = 0.05


class Model:
  def __init__(self, device):
    self.nu = NU
    self.nhistory = 1
    self.actuator_history = wp.array([(3, 1), (0, 0)], dtype=wp.vec2i, device=device)
    self.actuator_historyadr = wp.array([0, -1], dtype=int, device=device)
    self.actuator_delay = wp.array([0.015, 0.0], dtype=float, device=device)
    self.actuator_gear = wp.array([2.0, 1.5], dtype=float, device=device)
    self.dof_invmass = wp.array([0.5, 2.0], dtype=float, device=device)


class Data:
  def __init__(self, device, ctrl):
    self.nworld = NWORLD
    self.time = wp.array([0.03, 0.03], dtype=float, device=device)
    buf = np.zeros((NWORLD, 8))
    buf[:, 1] = 2.0
    buf[:, 2:5] = [0.0, 0.01, 0.02]
    buf[:, 5:8] = [[0.3, 0.5, 0.4], [-0.2, 0.1, 0.6]]
    self.history = wp.array(buf, dtype=float, device=device)
    self.ctrl = ctrl
    self.qpos = wp.array([[0.1, -0.3], [0.0, 0.2]], dtype=float, device=device)
    self.qvel = wp.array([[0.5, 0.0], [-0.4, 0.3]], dtype=float, device=device)


@wp.kernel
def _step(
  gear: wp.array[float],
  invmass: wp.array[float],
  ctrl: wp.array2d[float],
  qpos: wp.array2d[float],
  qvel: wp.array2d[float],
  dt: float,
  qpos_out: wp.array2d[float],
):
  worldid, dofid = wp.tid()
  v = qvel[worldid, dofid] + dt * invmass[dofid] * gear[dofid] * ctrl[worldid, dofid]
  qpos_out[worldid, dofid] = qpos[worldid, dofid] + dt * v


@wp.kernel
def _track(qpos: wp.array2d[float], target: wp.array2d[float], loss: wp.array[float]):
  worldid, dofid = wp.tid()
  r = 10.0 * (qpos[worldid, dofid] - target[worldid, dofid])
  wp.atomic_add(loss, 0, r * r)


class DelayedControl:
  def __init__(self, device):
    self.device = device
    self.m = Model(device)
    self.target = wp.array([[0.11, -0.29], [-0.01, 0.21]], dtype=float, device=device)
    self.params = {"ctrl": wp.array([[0.8, -1.2], [0.4, 2.5]], dtype=float, device=device, requires_grad=True)}

  def _forward(self, loss, requires_grad):
    m = self.m
    d = Data(self.device, self.params["ctrl"])

    # read delayed ctrl (or direct copy if no delay)
    if m.nhistory > 0:
      ctrl = wp.empty((d.nworld, m.nu), dtype=float, requires_grad=d.ctrl.requires_grad)
      history.read_ctrl_delayed(m, d, ctrl)
    else:
      ctrl = d.ctrl

    qpos_next = wp.zeros((NWORLD, NU), dtype=float, device=self.device, requires_grad=requires_grad)
    wp.launch(_step, dim=(NWORLD, NU),
              inputs=[self.m.actuator_gear, self.m.dof_invmass, ctrl, d.qpos, d.qvel, TIMESTEP],
              outputs=[qpos_next])
    wp.launch(_track, dim=(NWORLD, NU), inputs=[qpos_next, self.target], outputs=[loss])

  def objective(self):
    with wp.ScopedDevice(self.device):
      loss = wp.zeros(1, dtype=float)
      self._forward(loss, False)
    return float(loss.numpy()[0])

  def gradient(self):
    p = self.params["ctrl"]
    p.grad.zero_()
    with wp.ScopedDevice(self.device):
      loss = wp.zeros(1, dtype=float, requires_grad=True)
      tape = wp.Tape()
      with tape:
        self._forward(loss, True)
      tape.backward(loss=loss)
    return {"ctrl": p.grad.numpy().copy()}


def make_problem(device, scale="small"):
  return DelayedControl(device)
