import warp as wp


@wp.struct
class Crate:
    pos: wp.vec3d
    mass: wp.float64


@wp.kernel
def place_crates(
    x: wp.array(dtype=wp.float64),
    lateral: wp.array(dtype=wp.float64),
    mass: wp.array(dtype=wp.float64),
    crates: wp.array(dtype=Crate),
):
    i = wp.tid()
    crates[i].pos.x = x[i]
    crates[i].pos.y = lateral[i]
    crates[i].mass = mass[i]


@wp.kernel
def axle_sums(
    crates: wp.array(dtype=Crate),
    wheelbase: wp.float64,
    gap: wp.float64,
    sums: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    c = crates[i]
    wp.atomic_add(sums, 0, c.mass * c.pos[0] / wheelbase)
    wp.atomic_add(sums, 1, c.mass * c.pos[1])
    if i > 0:
        d = c.pos[0] - crates[i - 1].pos[0] - gap
        wp.atomic_add(sums, 2, d * d)


@wp.kernel
def axle_misfit(
    sums: wp.array(dtype=wp.float64),
    target_rear: wp.float64,
    target_side: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    dr = sums[0] - target_rear
    ds = sums[1] - target_side
    loss[0] = dr * dr + ds * ds + sums[2]
