import warp as wp

LAYERS = wp.constant(8)


@wp.kernel
def transmit(
    source: wp.array(dtype=wp.float64),
    mu: wp.array(dtype=wp.float64),
    path: wp.array2d(dtype=wp.float64),
    flux: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    flux[i] = source[i]
    for j in range(LAYERS):
        flux[i] *= wp.exp(-mu[j] * path[i, j])


@wp.kernel
def detector_misfit(
    flux: wp.array(dtype=wp.float64),
    counts: wp.array(dtype=wp.float64),
    weight: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = flux[i] - counts[i]
    wp.atomic_add(out, 0, weight * r * r)
