import warp as wp

CORE = """
    double bx = B * x;
    double phi = bx - E * (bx - atan(bx));
    return sin(C * atan(phi));
"""

CORE_ADJ = """
    double bx = B * x;
    double ab = atan(bx);
    double phi = bx - E * (bx - ab);
    double at = atan(phi);
    double g = adj_ret * cos(C * at);
    double gp = g * C / (1.0 + phi * phi);
    double q = 1.0 / (1.0 + bx * bx);
    adj_x += gp * (B - E * (B - B * q));
    adj_B += gp * (x - E * (x - x * q));
    adj_C += g * at;
    adj_E += gp * (ab - bx);
"""


@wp.func_native(CORE, CORE_ADJ)
def magic_core(x: wp.float64, B: wp.float64, C: wp.float64, E: wp.float64) -> wp.float64: ...
