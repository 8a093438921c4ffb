# SPDX-FileCopyrightText: Copyright (c) 2025 The Newton Developers
# SPDX-License-Identifier: Apache-2.0
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
# http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.


import warp as wp

wp.config.enable_backward = False

FLOAT_MIN = -1e30
FLOAT_MAX = 1e30
MINVAL = 1e-15
MINVAL2 = MINVAL * MINVAL

mat43 = wp.types.matrix(shape=(4, 3), dtype=float)


@wp.struct
class GJKResult:
    dist: float
    x1: wp.vec3
    x2: wp.vec3
    dim: int
    simplex: mat43
    simplex1: mat43
    simplex2: mat43
