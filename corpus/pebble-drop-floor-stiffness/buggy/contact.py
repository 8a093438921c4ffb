import warp as wp


@wp.func
def floor_force(height: wp.float64, vel: wp.float64, radius: wp.float64, k: wp.float64, damping: wp.float64):
    pen = radius - height
    return wp.where(pen > wp.float64(0.0), k * wp.pow(pen, wp.float64(1.5)) * (wp.float64(1.0) - damping * vel), wp.float64(0.0))
