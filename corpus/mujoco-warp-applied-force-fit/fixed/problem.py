# SPDX-License-Identifier: Apache-2.0
# support.py is adapted from google-deepmind/mujoco_warp mujoco_warp/_src/support.py
# (Copyright 2025 The Newton Developers, Apache License 2.0).

import numpy as np
import warp as wp

import support

NWORLD = 2


class Model:
  def __init__(self, device):
    self.nbody = 4
    self.nv = 3
    self.body_parentid = wp.array([0, 0, 1, 1], dtype=int, device=device)
    self.body_rootid = wp.array([0, 1, 1, 1], dtype=int, device=device)
    self.dof_bodyid = wp.array([1, 2, 3], dtype=int, device=device)
    isdofancestor = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1]], dtype=np.int32)
    self.body_isdofancestor = wp.array(isdofancestor, dtype=int, device=device)


class Data:
  def __init__(self, device, xfrc_applied):
    self.nworld = NWORLD
    rng = np.random.default_rng(11)
    self.xipos = wp.array(rng.uniform(-0.5, 0.5, (NWORLD, 4, 3)), dtype=wp.vec3, device=device)
    com = np.zeros((NWORLD, 4, 3))
    com[:, 1] = [0.05, -0.02, 0.1]
    self.subtree_com = wp.array(com, dtype=wp.vec3, device=device)
    cdof = np.zeros((NWORLD, 3, 6))
    cdof[:, 0] = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    cdof[:, 1] = [0.0, 1.0, 0.0, 0.1, 0.0, -0.2]
    cdof[:, 2] = [1.0, 0.0, 0.0, 0.0, 0.3, 0.1]
    self.cdof = wp.array(cdof, dtype=wp.spatial_vector, device=device)
    self.xfrc_applied = xfrc_applied


@wp.kernel
def _passive(qvel: wp.array2d[float], damping: float, qfrc_out: wp.array2d[float]):
  worldid, dofid = wp.tid()
  qfrc_out[worldid, dofid] = -damping * qvel[worldid, dofid]


@wp.kernel
def _effort(qfrc: wp.array2d[float], target: wp.array2d[float], loss: wp.array[float]):
  worldid, dofid = wp.tid()
  r = qfrc[worldid, dofid] - target[worldid, dofid]
  wp.atomic_add(loss, 0, r * r)


class PushFit:
  def __init__(self, device):
    self.device = device
    self.m = Model(device)
    rng = np.random.default_rng(5)
    self.qvel = wp.array(rng.uniform(-1.0, 1.0, (NWORLD, 3)), dtype=float, device=device)
    self.target = wp.array(rng.uniform(-1.0, 1.0, (NWORLD, 3)), dtype=float, device=device)
    xfrc = rng.uniform(-1.0, 1.0, (NWORLD, 4, 6))
    xfrc[:, 0] = 0.0
    self.params = {"xfrc_applied": wp.array(xfrc, dtype=wp.spatial_vector, device=device, requires_grad=True)}

  def _forward(self, loss, requires_grad):
    d = Data(self.device, self.params["xfrc_applied"])
    qfrc = wp.zeros((NWORLD, 3), dtype=float, device=self.device, requires_grad=requires_grad)
    wp.launch(_passive, dim=(NWORLD, 3), inputs=[self.qvel, 0.1], outputs=[qfrc], device=self.device)
    support.xfrc_accumulate(self.m, d, qfrc)
    wp.launch(_effort, dim=(NWORLD, 3), inputs=[qfrc, self.target], outputs=[loss], device=self.device)

  def objective(self):
    loss = wp.zeros(1, dtype=float, device=self.device)
    with wp.ScopedDevice(self.device):
      self._forward(loss, False)
    return float(loss.numpy()[0])

  def gradient(self):
    p = self.params["xfrc_applied"]
    p.grad.zero_()
    loss = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)
    with wp.ScopedDevice(self.device):
      tape = wp.Tape()
      with tape:
        self._forward(loss, True)
      tape.backward(loss=loss)
    return {"xfrc_applied": p.grad.numpy().copy()}


def make_problem(device, scale="small"):
  return PushFit(device)
