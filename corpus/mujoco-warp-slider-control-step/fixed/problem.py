# Copyright 2025 The Newton Developers
# SPDX-License-Identifier: Apache-2.0
# Adapted from google-deepmind/mujoco_warp mujoco_warp/_src/smooth.py,
# mujoco_warp/_src/forward.py, mujoco_warp/_src/adjoint.py and
# mujoco_warp/_src/grad_test.py (Apache License 2.0).

import numpy as np
import warp as wp

NWORLD = 3
NV = 2
TIMESTEP = 0.05


@wp.kernel
def _actuator_force(
  gear: wp.array[float],
  ctrl_in: wp.array2d[float],
  qfrc_actuator_out: wp.array2d[float],
):
  worldid, dofid = wp.tid()
  qfrc_actuator_out[worldid, dofid] = gear[dofid] * ctrl_in[worldid, dofid]


@wp.kernel
def _solve_simple(
  # In:
  simple_dofs: wp.array[int],
  D: wp.array2d[float],
  y: wp.array2d[float],
  # Out:
  x_out: wp.array2d[float],
):
  # A simple (decoupled) dof's solve is just x = (1/diag) * y.
  worldid, s = wp.tid()
  dofid = simple_dofs[s]
  x_out[worldid, dofid] = D[worldid, dofid] * y[worldid, dofid]


@wp.kernel(enable_backward=False)
def _factor_solve_simple(
  # Model:
  M_rownnz: wp.array[int],
  M_rowadr: wp.array[int],
  # Data in:
  M_in: wp.array2d[float],
  # In:
  simple_dofs: wp.array[int],
  y: wp.array2d[float],
  # Out:
  D_out: wp.array2d[float],
  x_out: wp.array2d[float],
):
  # Fused factor+solve for a simple dof: read M(i,i) once, emit D = 1/diag and x = D * y.
  worldid, s = wp.tid()
  dofid = simple_dofs[s]
  diag_i = M_rowadr[dofid] + M_rownnz[dofid] - 1
  d_inv = 1.0 / M_in[worldid, diag_i]
  D_out[worldid, dofid] = d_inv
  x_out[worldid, dofid] = d_inv * y[worldid, dofid]


@wp.kernel
def _accumulate_grad_kernel(
  # In:
  src: wp.array2d[float],
  # Out:
  dst_out: wp.array2d[float],
):
  worldid, dofid = wp.tid()
  dst_out[worldid, dofid] = dst_out[worldid, dofid] + src[worldid, dofid]


@wp.kernel
def _euler(
  qpos_in: wp.array2d[float],
  qvel_in: wp.array2d[float],
  qacc_in: wp.array2d[float],
  timestep: float,
  qpos_out: wp.array2d[float],
  qvel_out: wp.array2d[float],
):
  worldid, dofid = wp.tid()
  v = qvel_in[worldid, dofid] + timestep * qacc_in[worldid, dofid]
  qvel_out[worldid, dofid] = v
  qpos_out[worldid, dofid] = qpos_in[worldid, dofid] + timestep * v


@wp.kernel
def _sum_qpos_kernel(
  # Data in:
  qpos_in: wp.array2d[float],
  # In:
  loss: wp.array[float],
):
  worldid, qid = wp.tid()
  wp.atomic_add(loss, 0, qpos_in[worldid, qid])


class Model:
  def __init__(self, device):
    self.nv = NV
    self.M_rownnz = wp.array([1, 1], dtype=int, device=device)
    self.M_rowadr = wp.array([0, 1], dtype=int, device=device)
    self.qLD_simple_dofs = wp.array([0, 1], dtype=int, device=device)
    self.actuator_gear = wp.array([1.0, 2.0], dtype=float, device=device)


class Data:
  def __init__(self, device, ctrl, requires_grad):
    self.nworld = NWORLD
    shape = (NWORLD, NV)
    self.ctrl = ctrl
    self.qpos = wp.array(np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]), dtype=float, device=device,
                         requires_grad=requires_grad)
    self.qvel = wp.array(np.array([[0.2, 0.0], [-0.1, 0.4], [0.0, 0.1]]), dtype=float, device=device,
                         requires_grad=requires_grad)
    self.M = wp.array(np.array([[1.0, 0.5], [1.0, 0.5], [2.0, 0.25]]), dtype=float, device=device)
    self.qLDiagInv = wp.zeros(shape, dtype=float, device=device, requires_grad=requires_grad)
    self.qfrc_smooth = wp.zeros(shape, dtype=float, device=device, requires_grad=requires_grad)
    self.qacc_smooth = wp.zeros(shape, dtype=float, device=device, requires_grad=requires_grad)
    self.qpos_next = wp.zeros(shape, dtype=float, device=device, requires_grad=requires_grad)
    self.qvel_next = wp.zeros(shape, dtype=float, device=device, requires_grad=requires_grad)


def solve_m(m, d, x, y):
  wp.launch(
    _solve_simple,
    dim=(d.nworld, m.qLD_simple_dofs.size),
    inputs=[m.qLD_simple_dofs, d.qLDiagInv, y],
    outputs=[x],
  )


def factor_solve_i(m, d, M, D, x, y):
  wp.launch(
    _factor_solve_simple,
    dim=(d.nworld, m.qLD_simple_dofs.size),
    inputs=[m.M_rownnz, m.M_rowadr, M, m.qLD_simple_dofs, y],
    outputs=[D, x],
  )


def _record_fwd_accel_adjoint(m, d):
  tape = wp._src.context.runtime.tape
  if tape is not None and d.qpos.requires_grad:
    # Capture current array refs for correct gradient isolation across substeps
    qacc_smooth_ref = d.qacc_smooth
    qfrc_smooth_ref = d.qfrc_smooth

    def _adjoint(m=m, d=d, qacc_smooth=qacc_smooth_ref, qfrc_smooth=qfrc_smooth_ref):
      adj_qacc_smooth = qacc_smooth.grad
      if adj_qacc_smooth is None:
        return

      # qfrc_smooth.grad += M_inv * qacc_smooth.grad
      tmp = wp.zeros_like(qfrc_smooth)
      solve_m(m, d, tmp, adj_qacc_smooth)
      if qfrc_smooth.grad is None:
        qfrc_smooth.grad = tmp
      else:
        wp.launch(
          _accumulate_grad_kernel,
          dim=(d.nworld, m.nv),
          inputs=[tmp],
          outputs=[qfrc_smooth.grad],
        )

    tape.record_func(_adjoint, [qacc_smooth_ref, qfrc_smooth_ref])


def step(m, d):
  wp.launch(_actuator_force, dim=(d.nworld, m.nv), inputs=[m.actuator_gear, d.ctrl], outputs=[d.qfrc_smooth])
  factor_solve_i(m, d, d.M, d.qLDiagInv, d.qacc_smooth, d.qfrc_smooth)
  _record_fwd_accel_adjoint(m, d)
  wp.launch(_euler, dim=(d.nworld, m.nv), inputs=[d.qpos, d.qvel, d.qacc_smooth, TIMESTEP],
            outputs=[d.qpos_next, d.qvel_next])


class SliderControl:
  def __init__(self, device):
    self.device = device
    self.m = Model(device)
    self.params = {"ctrl": wp.array(np.array([[0.5, -1.0], [1.5, 0.25], [-0.75, 2.0]]), dtype=float,
                                    device=device, requires_grad=True)}

  def objective(self):
    with wp.ScopedDevice(self.device):
      d = Data(self.device, self.params["ctrl"], False)
      step(self.m, d)
      loss = wp.zeros(1, dtype=float)
      wp.launch(_sum_qpos_kernel, dim=(d.nworld, self.m.nv), inputs=[d.qpos_next, loss])
    return float(loss.numpy()[0])

  def gradient(self):
    ctrl = self.params["ctrl"]
    ctrl.grad.zero_()
    with wp.ScopedDevice(self.device):
      d = Data(self.device, ctrl, True)
      loss = wp.zeros(1, dtype=float, requires_grad=True)
      tape = wp.Tape()
      with tape:
        step(self.m, d)
        wp.launch(_sum_qpos_kernel, dim=(d.nworld, self.m.nv), inputs=[d.qpos_next, loss])
      tape.backward(loss=loss)
    return {"ctrl": ctrl.grad.numpy().copy()}


def make_problem(device, scale="small"):
  return SliderControl(device)
