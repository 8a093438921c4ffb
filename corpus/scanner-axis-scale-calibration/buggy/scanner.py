import warp as wp


@wp.kernel
def apply_axis_scale(
    pts: wp.array(dtype=wp.vec3d),
    head: wp.array(dtype=wp.int32),
    sx: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    pts[i].x *= sx[head[i]]


@wp.kernel
def residual(
    pts: wp.array(dtype=wp.vec3d),
    ref: wp.array(dtype=wp.vec3d),
    inv_n: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pts[i] - ref[i]
    wp.atomic_add(loss, 0, wp.dot(d, d) * inv_n)
