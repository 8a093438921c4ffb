import warp as wp


@wp.kernel
def drop_seeds(
    release: wp.array(dtype=wp.float64),
    speed: wp.float64,
    fall_time: wp.float64,
    bounce: wp.float64,
    landing: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    x = release[i] + speed * fall_time
    landing[i] = x + bounce * wp.sin(wp.float64(3.0) * x)


@wp.kernel
def bin_counts(landing: wp.array(dtype=wp.float64), width: wp.float64, bins: int, counts: wp.array(dtype=wp.float64)):
    i = wp.tid()
    b = int(wp.floor(landing[i] / width))
    b = wp.clamp(b, 0, bins - 1)
    wp.atomic_add(counts, b, wp.float64(1.0))


@wp.kernel
def row_cost(counts: wp.array(dtype=wp.float64), wanted: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    b = wp.tid()
    d = counts[b] - wanted[b]
    wp.atomic_add(out, 0, d * d)


@wp.kernel
def spacing_cost(landing: wp.array(dtype=wp.float64), pitch: wp.float64, weight: wp.float64,
                 out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if i > 0:
        d = landing[i] - landing[i - 1] - pitch
        wp.atomic_add(out, 0, weight * d * d)
