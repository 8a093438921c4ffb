import warp as wp

CORE = """
    double bx = B * x;
    double phi = bx - E * (bx - atan(bx));
    return sin(C * atan(phi));
"""


@wp.func_native(CORE)
def magic_core(x: wp.float64, B: wp.float64, C: wp.float64, E: wp.float64) -> wp.float64: ...
