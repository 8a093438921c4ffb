import warp as wp


@wp.func
def adc(x: wp.float64):
    return wp.round(x * wp.float64(255.0)) / wp.float64(255.0)


@wp.func_grad(adc)
def adj_adc(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += adj_ret


@wp.kernel
def expose(
    radiance: wp.array2d(dtype=wp.float64),
    gain: wp.array(dtype=wp.float64),
    tile: int,
    ref: wp.array2d(dtype=wp.float64),
    w: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    r, c = wp.tid()
    t = (r // tile) * (radiance.shape[1] // tile) + c // tile
    v = wp.clamp(gain[t] * radiance[r, c], wp.float64(0.0), wp.float64(1.0))
    d = adc(v) - ref[r, c]
    wp.atomic_add(loss, 0, w * d * d)
