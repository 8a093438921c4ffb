import warp as wp


@wp.kernel
def logistic_loss(
    x: wp.array2d(dtype=wp.float64),
    y: wp.array(dtype=wp.float64),
    w: wp.array(dtype=wp.float64),
    b: wp.array(dtype=wp.float64),
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    z = b[0]
    for j in range(8):
        z = z + x[i, j] * w[j]
    softplus = wp.max(z, wp.float64(0.0)) + wp.log(wp.float64(1.0) + wp.exp(-wp.abs(z)))
    wp.atomic_add(loss, 0, scale * (softplus - y[i] * z))


@wp.kernel
def weight_decay(w: wp.array(dtype=wp.float64), lam: wp.float64, loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    wp.atomic_add(loss, 0, lam * w[j] * w[j])
