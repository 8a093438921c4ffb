import warp as wp


@wp.kernel
def fir(taps: wp.array(dtype=wp.float64), sig: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    b, t = wp.tid()
    acc = wp.float64(0.0)
    for j in range(taps.shape[0]):
        if t - j >= 0:
            acc += taps[j] * sig[b, t - j]
    out[b, t] = acc


@wp.kernel
def cone_step(
    drive: wp.array2d(dtype=wp.float64),
    t: int,
    dt: wp.float64,
    stiff: wp.float64,
    damp: wp.float64,
    pos: wp.array2d(dtype=wp.float64),
    vel: wp.array2d(dtype=wp.float64),
):
    b = wp.tid()
    a = drive[b, t] - stiff * pos[b, t] - damp * vel[b, t]
    v = vel[b, t] + dt * a
    vel[b, t + 1] = v
    pos[b, t + 1] = pos[b, t] + dt * v


@wp.kernel
def excursion_error(pos: wp.array2d(dtype=wp.float64), ref: wp.array2d(dtype=wp.float64), w: wp.float64,
                    err: wp.array(dtype=wp.float64)):
    b, t = wp.tid()
    d = pos[b, t] - ref[b, t]
    wp.atomic_add(err, 0, w * d * d)


def prefilter(taps, sig):
    out = wp.zeros(sig.shape, dtype=wp.float64, requires_grad=True)
    wp.launch(fir, dim=sig.shape, inputs=[taps, sig], outputs=[out])
    return out


def play(drive, samples):
    batch = drive.shape[0]
    pos = wp.zeros((batch, samples + 1), dtype=wp.float64, requires_grad=True)
    vel = wp.zeros((batch, samples + 1), dtype=wp.float64, requires_grad=True)
    for t in range(samples):
        wp.launch(cone_step, dim=batch, inputs=[drive, t, wp.float64(0.1), wp.float64(4.0), wp.float64(0.6)],
                  outputs=[pos, vel])
    return pos
