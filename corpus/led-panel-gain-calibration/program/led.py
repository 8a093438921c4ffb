import warp as wp

LEVELS = wp.constant(wp.float64(15.0))


@wp.func
def driver_duty(cmd: wp.float64):
    return wp.round(LEVELS * wp.clamp(cmd, wp.float64(0.0), wp.float64(1.0))) / LEVELS


@wp.kernel
def panel_response(
    gain: wp.array(dtype=wp.float64),
    command: wp.array2d(dtype=wp.float64),
    gamma: wp.float64,
    out: wp.array2d(dtype=wp.float64),
):
    f, i = wp.tid()
    duty = driver_duty(gain[i] * command[f, i])
    out[f, i] = wp.pow(duty + wp.float64(1.0e-3), gamma)


@wp.kernel
def photometer_loss(
    out: wp.array2d(dtype=wp.float64),
    reading: wp.array2d(dtype=wp.float64),
    gain: wp.array(dtype=wp.float64),
    w_data: wp.float64,
    w_prior: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    f, i = wp.tid()
    r = out[f, i] - reading[f, i]
    acc = w_data * r * r
    if f == 0:
        d = gain[i] - wp.float64(1.0)
        acc = acc + w_prior * d * d
    wp.atomic_add(loss, 0, acc)
