import warp as wp


@wp.kernel
def advect(
    p_in: wp.array(dtype=wp.vec3),
    seed: wp.uint32,
    mean_wind: wp.vec3,
    amp: float,
    freq: float,
    dt: float,
    p_out: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    p = p_in[i]
    v = mean_wind + amp * wp.curlnoise(seed, p * freq)
    p_out[i] = p + dt * v


@wp.kernel
def landing_misfit(
    p: wp.array(dtype=wp.vec3),
    target: wp.array(dtype=wp.vec3),
    inv_n: float,
    loss: wp.array(dtype=float),
):
    i = wp.tid()
    d = p[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d) * inv_n)
