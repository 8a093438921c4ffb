import warp as wp


@wp.kernel
def tip_error(
    joints: wp.array2d(dtype=wp.float64),
    measured: wp.array(dtype=wp.vec2d),
    nominal: wp.array(dtype=wp.float64),
    dlen: wp.array(dtype=wp.float64),
    doff: wp.array(dtype=wp.float64),
    inv_n: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    angle = wp.float64(0.0)
    x = wp.float64(0.0)
    y = wp.float64(0.0)
    for j in range(3):
        angle = angle + joints[i, j] + doff[j]
        length = nominal[j] + dlen[j]
        x = x + length * wp.cos(angle)
        y = y + length * wp.sin(angle)
    d = wp.vec2d(x, y) - measured[i]
    wp.atomic_add(loss, 0, inv_n * wp.dot(d, d))


@wp.kernel
def sparsity_penalty(dev: wp.array(dtype=wp.float64), weight: wp.float64, loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    wp.atomic_add(loss, 0, weight * wp.abs(dev[j]))
