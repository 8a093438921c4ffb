# Copyright 2025 The Newton Developers
# SPDX-License-Identifier: Apache-2.0
# Adapted from google-deepmind/mujoco_warp mujoco_warp/_src/constraint.py
# (Apache License 2.0).

import numpy as np
import warp as wp

MJ_MINVAL = wp.constant(1.0e-15)
MJ_MINIMP = wp.constant(0.0001)
MJ_MAXIMP = wp.constant(0.9999)
REFSAFE = wp.constant(1 << 12)


class vec5f(wp.types.vector(length=5, dtype=float)):
  pass


vec5 = vec5f

NCON = 6
TIMESTEP = 0.002


@wp.func
def _efc_row(
  # Model:
  opt_disableflags: int,
  # In:
  worldid: int,
  timestep: float,
  efcid: int,
  pos_aref: float,
  pos_imp: float,
  invweight: float,
  solref: wp.vec2,
  solimp: vec5,
  margin: float,
  vel: float,
  frictionloss: float,
  type: int,
  id: int,
  # Out:
  type_out: wp.array2d(dtype=int),
  id_out: wp.array2d(dtype=int),
  pos_out: wp.array2d(dtype=float),
  margin_out: wp.array2d(dtype=float),
  D_out: wp.array2d(dtype=float),
  vel_out: wp.array2d(dtype=float),
  aref_out: wp.array2d(dtype=float),
  frictionloss_out: wp.array2d(dtype=float),
):
  # calculate kbi
  timeconst = solref[0]
  dampratio = solref[1]
  dmin = solimp[0]
  dmax = solimp[1]
  width = solimp[2]
  mid = solimp[3]
  power = solimp[4]

  if not (opt_disableflags & REFSAFE):
    timeconst = wp.max(timeconst, 2.0 * timestep)

  dmin = wp.clamp(dmin, MJ_MINIMP, MJ_MAXIMP)
  dmax = wp.clamp(dmax, MJ_MINIMP, MJ_MAXIMP)
  width = wp.max(MJ_MINVAL, width)
  mid = wp.clamp(mid, MJ_MINIMP, MJ_MAXIMP)
  power = wp.max(1.0, power)

  # see https://mujoco.readthedocs.io/en/latest/modeling.html#solver-parameters
  dmax_sq = dmax * dmax
  k = 1.0 / (dmax_sq * timeconst * timeconst * dampratio * dampratio)
  b = 2.0 / (dmax * timeconst)
  k = wp.where(solref[0] <= 0, -solref[0] / dmax_sq, k)
  b = wp.where(solref[1] <= 0, -solref[1] / dmax, b)

  imp_x = wp.abs(pos_imp) / width
  imp_a = (1.0 / wp.pow(mid, power - 1.0)) * wp.pow(imp_x, power)
  imp_b = 1.0 - (1.0 / wp.pow(1.0 - mid, power - 1.0)) * wp.pow(1.0 - imp_x, power)
  imp_y = wp.where(imp_x < mid, imp_a, imp_b)
  imp = dmin + imp_y * (dmax - dmin)
  imp = wp.clamp(imp, dmin, dmax)
  imp = wp.where(imp_x > 1.0, dmax, imp)

  # set outputs
  D_out[worldid, efcid] = 1.0 / wp.max(invweight * (1.0 - imp) / imp, MJ_MINVAL)
  vel_out[worldid, efcid] = vel
  aref_out[worldid, efcid] = -k * imp * pos_aref - b * vel
  pos_out[worldid, efcid] = pos_aref + margin
  margin_out[worldid, efcid] = margin
  frictionloss_out[worldid, efcid] = frictionloss
  type_out[worldid, efcid] = type
  id_out[worldid, efcid] = id


@wp.kernel
def _contact_rows(
  opt_disableflags: int,
  timestep: float,
  dist: wp.array(dtype=float),
  contact_vel: wp.array(dtype=float),
  invweight: wp.array(dtype=float),
  solref: wp.array(dtype=wp.vec2),
  solimp: wp.array(dtype=vec5),
  type_out: wp.array2d(dtype=int),
  id_out: wp.array2d(dtype=int),
  pos_out: wp.array2d(dtype=float),
  margin_out: wp.array2d(dtype=float),
  D_out: wp.array2d(dtype=float),
  vel_out: wp.array2d(dtype=float),
  aref_out: wp.array2d(dtype=float),
  frictionloss_out: wp.array2d(dtype=float),
):
  conid = wp.tid()
  _efc_row(opt_disableflags, 0, timestep, conid, dist[conid], dist[conid], invweight[conid], solref[conid],
           solimp[conid], 0.0, contact_vel[conid], 0.0, 0, conid, type_out, id_out, pos_out, margin_out, D_out,
           vel_out, aref_out, frictionloss_out)


@wp.kernel
def _row_loss(D: wp.array2d(dtype=float), aref: wp.array2d(dtype=float), aref_target: wp.array(dtype=float),
              loss: wp.array(dtype=float)):
  i = wp.tid()
  r = aref[0, i] - aref_target[i]
  wp.atomic_add(loss, 0, 1.0e-5 * r * r + 0.01 * D[0, i])


class ContactFit:
  def __init__(self, device):
    self.device = device
    self.dist = wp.array(np.array([-0.04, -0.08, -0.14, -0.24, -0.36, -0.5], dtype=np.float32),
                         device=device)
    self.vel = wp.array(np.array([-0.05, 0.02, -0.1, 0.04, -0.02, 0.01], dtype=np.float32), device=device)
    self.invweight = wp.array(np.array([1.0, 1.5, 0.8, 1.2, 2.0, 0.6], dtype=np.float32), device=device)
    self.aref_target = wp.array(np.array([80.0, 180.0, 320.0, 560.0, 840.0, 1200.0], dtype=np.float32), device=device)
    solref = np.tile(np.array([0.02, 1.0], dtype=np.float32), (NCON, 1))
    solimp = np.tile(np.array([0.9, 0.95, 0.2, 0.5, 2.0], dtype=np.float32), (NCON, 1))
    self.solref = wp.array(solref, dtype=wp.vec2, device=device)
    self.params = {"solimp": wp.array(solimp, dtype=vec5, device=device, requires_grad=True)}

  def _rows(self, loss):
    shape = (1, NCON)
    outs = [wp.zeros(shape, dtype=int, device=self.device), wp.zeros(shape, dtype=int, device=self.device)]
    outs += [wp.zeros(shape, dtype=float, device=self.device, requires_grad=True) for _ in range(6)]
    wp.launch(_contact_rows, dim=NCON,
              inputs=[0, TIMESTEP, self.dist, self.vel, self.invweight, self.solref, self.params["solimp"]],
              outputs=outs, device=self.device)
    wp.launch(_row_loss, dim=NCON, inputs=[outs[4], outs[6], self.aref_target], outputs=[loss], device=self.device)

  def objective(self):
    loss = wp.zeros(1, dtype=float, device=self.device)
    self._rows(loss)
    return float(loss.numpy()[0])

  def gradient(self):
    for p in self.params.values():
      p.grad.zero_()
    loss = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)
    tape = wp.Tape()
    with tape:
      self._rows(loss)
    tape.backward(loss=loss)
    return {k: p.grad.numpy().copy() for k, p in self.params.items()}


def make_problem(device, scale="small"):
  return ContactFit(device)
