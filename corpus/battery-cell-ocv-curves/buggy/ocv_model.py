import warp as wp


@wp.func
def ocv(c: wp.array(dtype=wp.float64), base: int, soc: wp.float64):
    one = wp.float64(1.0)
    return c[base] + c[base + 1] * soc + c[base + 2] * wp.log(soc) - c[base + 3] * wp.log(one - soc)


@wp.kernel
def voltage_residuals(
    coef: wp.array(dtype=wp.float64),
    soc: wp.array(dtype=wp.float64),
    volts: wp.array(dtype=wp.float64),
    samples: int,
    inv_count: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    tid = wp.tid()
    cell = tid // samples
    r = ocv(coef, cell * 4, soc[tid]) - volts[tid]
    wp.atomic_add(loss, 0, r * r * inv_count)
