import warp as wp

HERTZ = """
    if (d <= 0.0) return 0.0;
    return k * d * sqrt(d);
"""

HERTZ_ADJ = """
    if (d > 0.0) {
        adj_d += 1.5 * k * sqrt(d) * adj_ret;
    }
"""


@wp.func_native(HERTZ, HERTZ_ADJ)
def hertz_force(d: wp.float64, k: wp.float64) -> wp.float64: ...
