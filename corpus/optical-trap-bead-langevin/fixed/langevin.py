import warp as wp


@wp.kernel
def seed_streams(seed: int, states: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    states[i] = wp.rand_init(seed, i)


@wp.kernel
def euler_maruyama(
    x: wp.array(dtype=wp.vec2d),
    center: wp.array(dtype=wp.vec2d),
    stiffness: wp.array(dtype=wp.float64),
    log_sigma: wp.array(dtype=wp.float64),
    dt: wp.float64,
    states: wp.array(dtype=wp.uint32),
    x_out: wp.array(dtype=wp.vec2d),
    states_out: wp.array(dtype=wp.uint32),
):
    i = wp.tid()
    rng = states[i]
    nx = wp.float64(wp.randn(rng))
    ny = wp.float64(wp.randn(rng))
    states_out[i] = rng
    amp = wp.exp(log_sigma[i]) * wp.sqrt(dt)
    drift = -stiffness[i] * (x[i] - center[i])
    x_out[i] = x[i] + dt * drift + amp * wp.vec2d(nx, ny)


@wp.kernel
def track_misfit(
    x: wp.array(dtype=wp.vec2d),
    tracked: wp.array(dtype=wp.vec2d),
    w: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - tracked[i]
    wp.atomic_add(out, 0, w * wp.dot(d, d))
