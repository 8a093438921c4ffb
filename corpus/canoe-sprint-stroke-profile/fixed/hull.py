import warp as wp


@wp.func
def hull_drag(v: wp.float64, cd: wp.float64, wetted: wp.float64):
    return wp.float64(0.5) * wp.float64(1000.0) * cd * wetted * v * wp.abs(v)
