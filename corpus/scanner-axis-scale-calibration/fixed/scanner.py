import warp as wp


@wp.kernel
def apply_axis_scale(
    src: wp.array(dtype=wp.vec3d),
    head: wp.array(dtype=wp.int32),
    sx: wp.array(dtype=wp.float64),
    pts: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    p = src[i]
    pts[i] = wp.vec3d(p.x * sx[head[i]], p.y, p.z)


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
