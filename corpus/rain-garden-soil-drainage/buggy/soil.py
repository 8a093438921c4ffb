import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def bucket_step(
    theta: wp.array(dtype=wp.float64),
    rain: wp.array2d(dtype=wp.float64),
    ksat: wp.array(dtype=wp.float64),
    t: int,
    dt: wp.float64,
    theta_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    th = theta[i]
    one = wp.float64(1.0)
    infil = rain[t, i] * (one - th)
    drain = ksat[i] * th * th * th
    theta_out[i] = th + dt * (infil - drain)
