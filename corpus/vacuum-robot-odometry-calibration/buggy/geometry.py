import math

import warp as wp


@wp.kernel(enable_backward=False)
def wrap_angles(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    two_pi = wp.float64(2.0 * math.pi)
    x = a[i] + wp.float64(math.pi)
    out[i] = x - two_pi * wp.floor(x / two_pi) - wp.float64(math.pi)
