import warp as wp


@wp.kernel
def fin_flux(
    conductance: wp.array(dtype=wp.float64),
    base_temp: wp.array(dtype=wp.float64),
    ambient: wp.float64,
    flux: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    m = wp.sqrt(conductance[i])
    flux[i] = m * wp.tanh(m) * (base_temp[i] - ambient)
