import warp as wp


@wp.kernel
def emitter_misfit(
    theta: wp.array(dtype=wp.float64),
    obs: wp.array(dtype=wp.float64),
    gamma: wp.float64,
    n_led: int,
    n_threads: int,
    loss: wp.array(dtype=wp.float64),
):
    tid = wp.tid()
    acc = wp.float64(0.0)
    for k in range((n_led - tid + n_threads - 1) // n_threads):
        i = tid + k * n_threads
        lum = wp.pow(theta[i], gamma)
        d = lum - obs[i]
        acc += d * d
    wp.atomic_add(loss, 0, acc)


@wp.kernel
def ambient_misfit(
    theta: wp.array(dtype=wp.float64),
    n_led: int,
    gain: wp.array(dtype=wp.float64),
    obs: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    d = gain[j] * theta[n_led + j] - obs[n_led + j]
    wp.atomic_add(loss, 0, wp.float64(0.5) * d * d)
