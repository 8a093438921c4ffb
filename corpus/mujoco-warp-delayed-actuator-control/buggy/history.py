# Copyright 2026 The Newton Developers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def _history_physical_index(cursor: int, n: int, logical: int) -> int:
  """Convert logical index (0=oldest, n-1=newest) to physical index."""
  return (cursor + 1 + logical) % n


@wp.func
def _history_find_index(
  # In:
  buf: wp.array2d[float],
  worldid: int,
  buf_offset: int,
  n: int,
  cursor: int,
  t: float,
) -> int:
  """Find logical index i such that times[i-1] < t <= times[i].

  Returns 0 if t <= times[oldest], n if t > times[newest].
  Uses circular binary search matching MuJoCo C historyFindIndex.
  """
  times_offset = buf_offset + 2

  oldest_phys = _history_physical_index(cursor, n, 0)
  newest_phys = _history_physical_index(cursor, n, n - 1)
  t_oldest = buf[worldid, times_offset + oldest_phys]
  t_newest = buf[worldid, times_offset + newest_phys]

  # before or at first element
  if t <= t_oldest:
    return 0

  # after last element
  if t > t_newest:
    return n

  # circular binary search: find smallest logical i such that times[phys(i)] >= t
  lo = int(0)
  hi = int(n - 1)
  while hi - lo > 1:
    mid = int((lo + hi) >> 1)
    mid_phys = _history_physical_index(cursor, n, mid)
    if buf[worldid, times_offset + mid_phys] < t:
      lo = mid
    else:
      hi = mid

  return hi


@wp.func
def _history_read_scalar(
  # In:
  buf: wp.array2d[float],
  worldid: int,
  buf_offset: int,
  n: int,
  t: float,
  interp: int,
) -> float:
  """Read a scalar value from history buffer at time t.

  interp: 0=zero-order-hold, 1=linear, 2=cubic (Catmull-Rom spline)
  """
  cursor = int(buf[worldid, buf_offset + 1])
  times_offset = buf_offset + 2
  values_offset = buf_offset + 2 + n

  oldest_phys = _history_physical_index(cursor, n, 0)
  newest_phys = _history_physical_index(cursor, n, n - 1)
  t_oldest = buf[worldid, times_offset + oldest_phys]
  t_newest = buf[worldid, times_offset + newest_phys]

  # extrapolate before oldest
  if t <= t_oldest + 1e-6:
    return buf[worldid, values_offset + oldest_phys]

  # extrapolate after newest
  if t >= t_newest - 1e-6:
    return buf[worldid, values_offset + newest_phys]

  # find bracketing index
  i = _history_find_index(buf, worldid, buf_offset, n, cursor, t)
  phys_i = _history_physical_index(cursor, n, i)

  # exact match
  if wp.abs(t - buf[worldid, times_offset + phys_i]) < 1e-6:
    return buf[worldid, values_offset + phys_i]

  phys_lo = _history_physical_index(cursor, n, i - 1)
  phys_hi = phys_i

  # zero-order hold
  if interp == 0:
    return buf[worldid, values_offset + phys_lo]

  dt = buf[worldid, times_offset + phys_hi] - buf[worldid, times_offset + phys_lo]
  alpha = (t - buf[worldid, times_offset + phys_lo]) / dt
  v_lo = buf[worldid, values_offset + phys_lo]
  v_hi = buf[worldid, values_offset + phys_hi]

  # linear interpolation
  if interp == 1:
    return v_lo + alpha * (v_hi - v_lo)

  # cubic spline interpolation (Catmull-Rom)
  alpha2 = alpha * alpha
  alpha3 = alpha2 * alpha
  h00 = 2.0 * alpha3 - 3.0 * alpha2 + 1.0
  h10 = alpha3 - 2.0 * alpha2 + alpha
  h01 = -2.0 * alpha3 + 3.0 * alpha2
  h11 = alpha3 - alpha2

  # finite-differenced Catmull-Rom slopes, 0 at endpoints
  m_lo = 0.0
  if i > 1:
    phys_lo_prev = _history_physical_index(cursor, n, i - 2)
    dt_lo = buf[worldid, times_offset + phys_hi] - buf[worldid, times_offset + phys_lo_prev]
    m_lo = (v_hi - buf[worldid, values_offset + phys_lo_prev]) / dt_lo

  m_hi = 0.0
  if i < n - 1:
    phys_hi_next = _history_physical_index(cursor, n, i + 1)
    dt_hi = buf[worldid, times_offset + phys_hi_next] - buf[worldid, times_offset + phys_lo]
    m_hi = (buf[worldid, values_offset + phys_hi_next] - v_lo) / dt_hi

  return h00 * v_lo + h10 * dt * m_lo + h01 * v_hi + h11 * dt * m_hi



@wp.kernel
def _read_ctrl_delayed_kernel(
  # Model:
  actuator_history: wp.array[wp.vec2i],
  actuator_historyadr: wp.array[int],
  actuator_delay: wp.array[float],
  # Data in:
  time_in: wp.array[float],
  history_in: wp.array2d[float],
  ctrl_in: wp.array2d[float],
  # Data out:
  ctrl_out: wp.array2d[float],
):
  """Read delayed ctrl for each actuator."""
  worldid, uid = wp.tid()

  hist = actuator_history[uid]
  nsample = hist[0]
  delay = actuator_delay[uid]

  if nsample == 0 or delay == 0.0:
    # no delay: direct copy
    ctrl_out[worldid, uid] = ctrl_in[worldid, uid]
  else:
    interp = hist[1]
    buf_offset = actuator_historyadr[uid]
    t = time_in[worldid] - delay
    ctrl_out[worldid, uid] = _history_read_scalar(history_in, worldid, buf_offset, nsample, t, interp)


def read_ctrl_delayed(m, d, ctrl: wp.array2d[float]):
  """Read delayed ctrl values for all actuators."""
  if m.nhistory == 0:
    wp.copy(ctrl, d.ctrl)
    return

  wp.launch(
    _read_ctrl_delayed_kernel,
    dim=(d.nworld, m.nu),
    inputs=[
      m.actuator_history,
      m.actuator_historyadr,
      m.actuator_delay,
      d.time,
      d.history,
      d.ctrl,
    ],
    outputs=[ctrl],
  )

