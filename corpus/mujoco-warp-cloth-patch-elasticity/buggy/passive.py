# Copyright 2025 The Newton Developers
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

import ad_flags as _ad_flags

wp.set_module_options({"enable_backward": _ad_flags.ad_enabled()})


@wp.kernel
def _flex_elasticity(
  # Model:
  nflex: int,
  opt_timestep: wp.array[float],
  flex_dim: wp.array[int],
  flex_vertadr: wp.array[int],
  flex_edgeadr: wp.array[int],
  flex_elemadr: wp.array[int],
  flex_elemnum: wp.array[int],
  flex_elemdataadr: wp.array[int],
  flex_stiffnessadr: wp.array[int],
  flex_elemedgeadr: wp.array[int],
  flex_vertbodyid: wp.array[int],
  flex_elem: wp.array[int],
  flex_elemedge: wp.array[int],
  flexedge_length0: wp.array[float],
  flex_stiffness: wp.array[float],
  flex_damping: wp.array[float],
  # Data in:
  xipos_in: wp.array2d[wp.vec3],
  flexvert_xpos_in: wp.array2d[wp.vec3],
  flexedge_length_in: wp.array2d[float],
  flexedge_velocity_in: wp.array2d[float],
  # In:
  dsbl_damper: bool,
  # Out:
  flex_spring_body_force_out: wp.array2d[wp.spatial_vector],
):
  worldid, elemid = wp.tid()
  timestep = opt_timestep[worldid % opt_timestep.shape[0]]

  f = int(-1)
  for i in range(nflex):
    locid = elemid - flex_elemadr[i]
    if locid >= 0 and locid < flex_elemnum[i]:
      f = i
      break

  # No owning flex found for this element: bail out before indexing with f, to
  # avoid a negative flex id reaching the autodiff-generated backward kernel.
  if f < 0:
    return

  stiffness_adr_base = flex_stiffnessadr[f]
  if stiffness_adr_base < 0:
    return
  if flex_stiffness[stiffness_adr_base] == 0.0:
    return

  local_elemid = elemid - flex_elemadr[f]
  dim = flex_dim[f]
  nvert = dim + 1
  nedge = nvert * (nvert - 1) / 2
  edges = wp.where(
    dim == 1,
    wp.matrix(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, shape=(6, 2), dtype=int),
    wp.where(
      dim == 3,
      wp.matrix(0, 1, 1, 2, 2, 0, 2, 3, 0, 3, 1, 3, shape=(6, 2), dtype=int),
      wp.matrix(1, 2, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, shape=(6, 2), dtype=int),
    ),
  )
  if timestep > 0.0 and not dsbl_damper:
    kD = flex_damping[f] / timestep
  else:
    kD = 0.0

  elem_data_adr = flex_elemdataadr[f] + local_elemid * (dim + 1)
  vbase = flex_vertadr[f]

  # skip trilinear/interp elements (vertbodyid == -1, no simplex stiffness)
  vert0_check = flex_elem[elem_data_adr]
  if flex_vertbodyid[vbase + vert0_check] < 0:
    return
  gradient = wp.matrix(0.0, shape=(6, 6))
  for e in range(nedge):
    vert0 = flex_elem[elem_data_adr + edges[e, 0]]
    vert1 = flex_elem[elem_data_adr + edges[e, 1]]
    xpos0 = flexvert_xpos_in[worldid, vbase + vert0]
    xpos1 = flexvert_xpos_in[worldid, vbase + vert1]
    for i in range(3):
      gradient[e, 0 + i] = xpos0[i] - xpos1[i]
      gradient[e, 3 + i] = xpos1[i] - xpos0[i]

  elongation = wp.spatial_vectorf(0.0)
  for e in range(nedge):
    idx = flex_elemedge[flex_elemedgeadr[f] + local_elemid * nedge + e]
    vel = flexedge_velocity_in[worldid, flex_edgeadr[f] + idx]
    deformed = flexedge_length_in[worldid, flex_edgeadr[f] + idx]
    reference = flexedge_length0[flex_edgeadr[f] + idx]
    previous = deformed - vel * timestep
    elongation[e] = deformed * deformed - reference * reference + (deformed * deformed - previous * previous) * kD

  metric = wp.matrix(0.0, shape=(6, 6))
  stiffness_size = 21
  stiffness_adr = stiffness_adr_base + local_elemid * stiffness_size
  id = int(0)
  for ed1 in range(nedge):
    for ed2 in range(ed1, nedge):
      metric[ed1, ed2] = flex_stiffness[stiffness_adr + id]
      metric[ed2, ed1] = flex_stiffness[stiffness_adr + id]
      id += 1

  force = wp.matrix(0.0, shape=(6, 3))
  for ed1 in range(nedge):
    for ed2 in range(nedge):
      for i in range(2):
        for x in range(3):
          force[edges[ed2, i], x] -= elongation[ed1] * gradient[ed2, 3 * i + x] * metric[ed1, ed2]

  for v in range(nvert):
    vert = flex_elem[elem_data_adr + v]
    bodyid = flex_vertbodyid[flex_vertadr[f] + vert]

    frc = force[v]

    node_pos = flexvert_xpos_in[worldid, flex_vertadr[f] + vert]
    body_xipos = xipos_in[worldid, bodyid]
    offset = body_xipos - node_pos
    spatial_frc = wp.spatial_vector(frc, -wp.cross(offset, frc))
    wp.atomic_add(flex_spring_body_force_out, worldid, bodyid, spatial_frc)



def flex_spring_force(m, d, dsbl_damper: bool = False):
  flex_spring_body_force = wp.zeros((d.nworld, m.nbody), dtype=wp.spatial_vector, device=d.qfrc_spring.device)
  wp.launch(
    _flex_elasticity,
    dim=(d.nworld, m.nflexelem),
    inputs=[
      m.nflex,
      m.opt.timestep,
      m.flex_dim,
      m.flex_vertadr,
      m.flex_edgeadr,
      m.flex_elemadr,
      m.flex_elemnum,
      m.flex_elemdataadr,
      m.flex_stiffnessadr,
      m.flex_elemedgeadr,
      m.flex_vertbodyid,
      m.flex_elem,
      m.flex_elemedge,
      m.flexedge_length0,
      m.flex_stiffness,
      m.flex_damping,
      d.xipos,
      d.flexvert_xpos,
      d.flexedge_length,
      d.flexedge_velocity,
      dsbl_damper,
    ],
    outputs=[flex_spring_body_force],
  )
  return flex_spring_body_force
