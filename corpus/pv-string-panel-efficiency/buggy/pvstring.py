import warp as wp


@wp.kernel
def string_power(
    eff: wp.array(dtype=wp.float64),
    irradiance: wp.array2d(dtype=wp.float64),
    cutoff: wp.float64,
    derate: wp.float64,
    measured: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    s = wp.tid()
    power = wp.float64(0.0)
    for p in range(4):
        g = irradiance[s, p]
        e = eff[s * 4 + p] * g
        power += e
        if g < cutoff:
            continue
        power -= derate * e * e
    d = power - measured[s]
    wp.atomic_add(loss, 0, d * d)
