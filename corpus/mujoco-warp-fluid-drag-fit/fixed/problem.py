# SPDX-License-Identifier: Apache-2.0
# passive.py, support.py and ad_flags.py are adapted from google-deepmind/mujoco_warp
# mujoco_warp/_src/passive.py, mujoco_warp/_src/support.py and
# mujoco_warp/_src/ad_flags.py (Copyright 2025 The Newton Developers, Apache License 2.0).

import os

os.environ.setdefault("MJWARP_ENABLE_AD", "1")

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

import passive  # noqa: E402

NWORLD = 1
NBODY = 4
NV = 3


class Opt:
  pass


class Model:
  def __init__(self, device):
    dev = device
    self.nbody = NBODY
    self.nv = NV
    self.opt = Opt()
    self.opt.wind = wp.array([(0.5, -0.2, 0.0)], dtype=wp.vec3, device=dev)
    self.opt.density = wp.array([1.2], dtype=float, device=dev)
    self.opt.viscosity = wp.array([0.02], dtype=float, device=dev)
    self.body_parentid = wp.array([0, 0, 1, 1], dtype=int, device=dev)
    self.body_rootid = wp.array([0, 1, 1, 1], dtype=int, device=dev)
    self.body_geomnum = wp.array([0, 1, 1, 1], dtype=int, device=dev)
    self.body_geomadr = wp.array([-1, 0, 1, 2], dtype=int, device=dev)
    self.body_mass = wp.array([[0.0, 2.0, 1.0, 0.5]], dtype=float, device=dev)
    inertia = [(0.0, 0.0, 0.0), (0.05, 0.06, 0.07), (0.02, 0.03, 0.025), (0.01, 0.012, 0.008)]
    self.body_inertia = wp.array([inertia], dtype=wp.vec3, device=dev)
    self.geom_type = wp.array([6, 6, 6], dtype=int, device=dev)
    self.geom_size = wp.array([[(0.2, 0.15, 0.1), (0.1, 0.1, 0.2), (0.05, 0.1, 0.1)]], dtype=wp.vec3, device=dev)
    self.geom_fluid = wp.zeros((3, 12), dtype=float, device=dev)
    self.body_fluid_ellipsoid = wp.array([False, False, False, False], dtype=wp.bool, device=dev)
    self.dof_bodyid = wp.array([1, 2, 3], dtype=int, device=dev)
    isdofancestor = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 0, 1]], dtype=np.int32)
    self.body_isdofancestor = wp.array(isdofancestor, dtype=int, device=dev)


class Data:
  def __init__(self, device, cvel, requires_grad):
    self.nworld = NWORLD
    rng = np.random.default_rng(2)
    self.xipos = wp.array(rng.uniform(-0.5, 0.5, (NWORLD, NBODY, 3)), dtype=wp.vec3, device=device)
    rot = np.array([[[1.0, 0.0, 0.0], [0.0, 0.8, -0.6], [0.0, 0.6, 0.8]]] * NBODY)
    self.ximat = wp.array(rot[None], dtype=wp.mat33, device=device)
    self.geom_xpos = wp.zeros((NWORLD, 3), dtype=wp.vec3, device=device)
    self.geom_xmat = wp.zeros((NWORLD, 3), dtype=wp.mat33, device=device)
    com = np.zeros((NWORLD, NBODY, 3))
    com[:, 1] = [0.05, -0.02, 0.1]
    self.subtree_com = wp.array(com, dtype=wp.vec3, device=device)
    cdof = np.zeros((NWORLD, NV, 6))
    cdof[:, 0] = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    cdof[:, 1] = [0.0, 1.0, 0.0, 0.1, 0.0, -0.2]
    cdof[:, 2] = [1.0, 0.0, 0.0, 0.0, 0.3, 0.1]
    self.cdof = wp.array(cdof, dtype=wp.spatial_vector, device=device)
    self.cvel = cvel
    self.qfrc_fluid = wp.zeros((NWORLD, NV), dtype=float, device=device, requires_grad=requires_grad)


@wp.kernel
def _effort(qfrc: wp.array2d[float], weight: wp.array[float], loss: wp.array[float]):
  worldid, dofid = wp.tid()
  q = qfrc[worldid, dofid]
  wp.atomic_add(loss, 0, weight[dofid] * q + 0.5 * q * q)


class DragFit:
  def __init__(self, device):
    self.device = device
    self.m = Model(device)
    self.weight = wp.array([1.0, -0.5, 2.0], dtype=float, device=device)
    cvel = np.array([[[0.0] * 6, [0.3, -0.2, 0.5, 1.0, 0.4, -0.3], [-0.4, 0.1, 0.2, -0.6, 0.8, 0.5],
                      [0.2, 0.6, -0.1, 0.9, -0.7, 0.4]]])
    self.params = {"cvel": wp.array(cvel, dtype=wp.spatial_vector, device=device, requires_grad=True)}

  def _forward(self, loss, requires_grad):
    d = Data(self.device, self.params["cvel"], requires_grad)
    passive._fluid(self.m, d)
    wp.launch(_effort, dim=(NWORLD, NV), inputs=[d.qfrc_fluid, self.weight], outputs=[loss])

  def objective(self):
    with wp.ScopedDevice(self.device):
      loss = wp.zeros(1, dtype=float)
      self._forward(loss, False)
    return float(loss.numpy()[0])

  def gradient(self):
    p = self.params["cvel"]
    p.grad.zero_()
    with wp.ScopedDevice(self.device):
      loss = wp.zeros(1, dtype=float, requires_grad=True)
      tape = wp.Tape()
      with tape:
        self._forward(loss, True)
      tape.backward(loss=loss)
    return {"cvel": p.grad.numpy().copy()}


def make_problem(device, scale="small"):
  return DragFit(device)
