import warp as wp


@wp.func
def fire(v: wp.float64):
    out = wp.float64(0.0)
    if v > wp.float64(0.0):
        out = wp.float64(1.0)
    return out


@wp.func_grad(fire)
def adj_fire(v: wp.float64, adj_ret: wp.float64):
    s = wp.float64(1.0) + wp.float64(5.0) * wp.abs(v)
    wp.adjoint[v] += adj_ret / (s * s)


@wp.kernel
def stack_channels(w: wp.array(dtype=wp.float64), x: wp.array2d(dtype=wp.float64), v: wp.array(dtype=wp.float64)):
    s, k = wp.tid()
    wp.atomic_add(v, s, w[k] * x[s, k])


@wp.kernel
def detection_loss(v: wp.array(dtype=wp.float64), threshold: wp.float64, label: wp.array(dtype=wp.float64),
                   scale: wp.float64, loss: wp.array(dtype=wp.float64)):
    s = wp.tid()
    d = fire(v[s] - threshold) - label[s]
    wp.atomic_add(loss, 0, scale * d * d)
