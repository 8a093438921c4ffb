import warp as wp


@wp.kernel
def section_lift(
    twist: wp.array(dtype=wp.float32),
    chord: wp.array(dtype=wp.float32),
    alpha0: wp.float32,
    lift: wp.array(dtype=wp.float32),
    drag: wp.array(dtype=wp.float32),
):
    i = wp.tid()
    a = alpha0 + twist[i]
    cl = 6.28 * wp.sin(a) / (1.0 + 0.3 * a * a)
    lift[i] = chord[i] * cl
    drag[i] = chord[i] * (0.01 + 0.05 * cl * cl)


@wp.kernel
def span_cost(
    lift: wp.array(dtype=wp.float32),
    drag: wp.array(dtype=wp.float32),
    elliptic: wp.array(dtype=wp.float32),
    total_lift: wp.float32,
    out: wp.array(dtype=wp.float32),
):
    i = wp.tid()
    d = lift[i] - total_lift * elliptic[i]
    wp.atomic_add(out, 0, d * d + drag[i])
