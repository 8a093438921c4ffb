import warp as wp


@wp.kernel
def die_forces(
    stroke: wp.array(dtype=wp.float64),
    gap: wp.array(dtype=wp.float64),
    stiffness: wp.float64,
    force: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    overlap = stroke[i] - gap[i]
    force[i] = stiffness * wp.max(overlap, wp.float64(0.0))


@wp.kernel
def setup_cost(
    force: wp.array(dtype=wp.float64),
    stroke: wp.array(dtype=wp.float64),
    target: wp.float64,
    smooth: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = (force[i] - target) / target
    c = r * r
    if i > 0:
        d = stroke[i] - stroke[i - 1]
        c = c + smooth * d * d
    wp.atomic_add(loss, 0, c)
