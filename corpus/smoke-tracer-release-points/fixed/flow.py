import warp as wp


@wp.func
def curl_field(seed: wp.uint32, q: wp.vec3):
    h = 0.05
    ex = wp.vec3(h, 0.0, 0.0)
    ey = wp.vec3(0.0, h, 0.0)
    ez = wp.vec3(0.0, 0.0, h)
    sx = seed
    sy = seed + wp.uint32(1)
    sz = seed + wp.uint32(2)
    dz_dy = wp.noise(sz, q + ey) - wp.noise(sz, q - ey)
    dy_dz = wp.noise(sy, q + ez) - wp.noise(sy, q - ez)
    dx_dz = wp.noise(sx, q + ez) - wp.noise(sx, q - ez)
    dz_dx = wp.noise(sz, q + ex) - wp.noise(sz, q - ex)
    dy_dx = wp.noise(sy, q + ex) - wp.noise(sy, q - ex)
    dx_dy = wp.noise(sx, q + ey) - wp.noise(sx, q - ey)
    return wp.vec3(dz_dy - dy_dz, dx_dz - dz_dx, dy_dx - dx_dy) / (2.0 * h)


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
    v = mean_wind + amp * curl_field(seed, p * freq)
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
