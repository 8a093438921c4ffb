import warp as wp


@wp.func
def contact_force(gap: wp.float64, stiffness: wp.float64, sharpness: wp.float64):
    z = -sharpness * gap
    smooth = stiffness * wp.log(wp.float64(1.0) + wp.exp(wp.min(z, wp.float64(40.0)))) / sharpness
    return wp.where(z > wp.float64(40.0), -stiffness * gap, smooth)
