import warp as wp


@wp.kernel
def remove_bias(
    raw: wp.array(dtype=wp.vec3d),
    bias: wp.array(dtype=wp.float64),
    out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    out[i] = raw[i] - wp.vec3d(bias[0], bias[1], bias[2])


@wp.kernel
def scale_vertical(
    acc: wp.array(dtype=wp.vec3d),
    gain: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    acc[i].z *= gain[0]


@wp.kernel
def gravity_residual(
    acc: wp.array(dtype=wp.vec3d),
    g_ref: wp.array(dtype=wp.vec3d),
    inv_n: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = acc[i] - g_ref[i]
    wp.atomic_add(loss, 0, wp.dot(d, d) * inv_n)
