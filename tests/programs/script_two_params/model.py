import warp as wp


@wp.kernel
def affine_loss(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64),
                loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    z = a[i] * x[i] + b[0]
    wp.atomic_add(loss, 0, z * z)
