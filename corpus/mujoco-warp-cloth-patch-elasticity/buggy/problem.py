# SPDX-License-Identifier: Apache-2.0
# passive.py and ad_flags.py are adapted from google-deepmind/mujoco_warp
# mujoco_warp/_src/passive.py, mujoco_warp/_src/warp_util.py and
# mujoco_warp/_src/ad_flags.py (Copyright 2025 The Newton Developers, Apache License 2.0).

import os

os.environ.setdefault("MJWARP_ENABLE_AD", "1")

import numpy as np  # noqa: E402
import warp as wp  # noqa: E402

import passive  # noqa: E402


class Opt:
  pass


class Model:
  def __init__(self, device):
    dev = device
    self.nflex = 1
    self.nbody = 5
    self.nflexelem = 2
    self.opt = Opt()
    self.opt.timestep = wp.array([0.002], dtype=float, device=dev)
    self.flex_dim = wp.array([2], dtype=int, device=dev)
    self.flex_vertadr = wp.array([0], dtype=int, device=dev)
    self.flex_edgeadr = wp.array([0], dtype=int, device=dev)
    self.flex_elemadr = wp.array([0], dtype=int, device=dev)
    self.flex_elemnum = wp.array([2], dtype=int, device=dev)
    self.flex_elemdataadr = wp.array([0], dtype=int, device=dev)
    self.flex_stiffnessadr = wp.array([0], dtype=int, device=dev)
    self.flex_elemedgeadr = wp.array([0], dtype=int, device=dev)
    self.flex_vertbodyid = wp.array([1, 2, 3, 4], dtype=int, device=dev)
    self.flex_elem = wp.array([0, 1, 2, 1, 3, 2], dtype=int, device=dev)
    self.flex_elemedge = wp.array([1, 2, 0, 4, 1, 3], dtype=int, device=dev)
    self.flex_edge = wp.array([(0, 1), (1, 2), (2, 0), (1, 3), (3, 2)], dtype=wp.vec2i, device=dev)
    self.flexedge_length0 = wp.array([1.0, 1.4142135, 1.0, 1.0, 1.0], dtype=float, device=dev)
    stiffness = np.zeros(42)
    stiffness[0:6] = [3.0, 0.5, 0.4, 2.5, 0.3, 2.0]
    stiffness[21:27] = [2.0, 0.2, 0.1, 3.0, 0.6, 2.5]
    self.flex_stiffness = wp.array(stiffness, dtype=float, device=dev)
    self.flex_damping = wp.array([0.0], dtype=float, device=dev)


class Data:
  def __init__(self, device, flexvert_xpos, requires_grad):
    self.nworld = 1
    self.flexvert_xpos = flexvert_xpos
    xipos = np.array([[(0.0, 0.0, 0.0), (0.0, 0.0, 0.1), (1.0, 0.0, 0.1), (1.0, 1.0, 0.1), (2.0, 1.0, 0.1)]])
    self.xipos = wp.array(xipos, dtype=wp.vec3, device=device)
    self.flexedge_length = wp.zeros((1, 5), dtype=float, device=device, requires_grad=requires_grad)
    self.flexedge_velocity = wp.zeros((1, 5), dtype=float, device=device)
    self.qfrc_spring = wp.zeros((1, 4), dtype=float, device=device, requires_grad=requires_grad)
    self.qfrc_damper = wp.zeros((1, 4), dtype=float, device=device, requires_grad=requires_grad)


@wp.kernel
def _edge_length(
  flex_edge: wp.array[wp.vec2i],
  flexvert_xpos: wp.array2d[wp.vec3],
  flexedge_length_out: wp.array2d[float],
):
  worldid, edgeid = wp.tid()
  e = flex_edge[edgeid]
  flexedge_length_out[worldid, edgeid] = wp.length(flexvert_xpos[worldid, e[1]] - flexvert_xpos[worldid, e[0]])


@wp.kernel
def _force_loss(body_force: wp.array2d[wp.spatial_vector], loss: wp.array[float]):
  worldid, bodyid = wp.tid()
  f = body_force[worldid, bodyid]
  w = float(bodyid + 1)
  wp.atomic_add(loss, 0, w * (f[0] + 0.5 * f[1] - 0.25 * f[2] + 0.1 * f[3] + 0.2 * f[5]))


class ClothPatch:
  def __init__(self, device):
    self.device = device
    self.m = Model(device)
    xpos = np.array([[(0.0, 0.0, 0.0), (1.1, 0.05, 0.0), (0.05, 0.95, 0.1), (1.2, 1.1, -0.05)]])
    self.params = {"flexvert_xpos": wp.array(xpos, dtype=wp.vec3, device=device, requires_grad=True)}

  def _forward(self, loss, requires_grad):
    m = self.m
    d = Data(self.device, self.params["flexvert_xpos"], requires_grad)
    wp.launch(_edge_length, dim=(1, 5), inputs=[m.flex_edge, d.flexvert_xpos], outputs=[d.flexedge_length])
    body_force = passive.flex_spring_force(m, d)
    wp.launch(_force_loss, dim=(1, m.nbody), inputs=[body_force], outputs=[loss])

  def objective(self):
    with wp.ScopedDevice(self.device):
      loss = wp.zeros(1, dtype=float)
      self._forward(loss, False)
    return float(loss.numpy()[0])

  def gradient(self):
    p = self.params["flexvert_xpos"]
    p.grad.zero_()
    with wp.ScopedDevice(self.device):
      loss = wp.zeros(1, dtype=float, requires_grad=True)
      tape = wp.Tape()
      with tape:
        self._forward(loss, True)
      tape.backward(loss=loss)
    return {"flexvert_xpos": p.grad.numpy().copy()}


def make_problem(device, scale="small"):
  return ClothPatch(device)
