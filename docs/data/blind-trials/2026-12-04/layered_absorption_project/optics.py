import warp as wp


@wp.kernel
def keep_positive(mu: wp.array(dtype=float), floor: float):
    i = wp.tid()
    mu[i] = wp.max(mu[i], floor)


@wp.kernel
def optical_depth(mu: wp.array(dtype=float), dz: float, depth: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(depth, 0, mu[i] * dz)


@wp.kernel
def transmitted(mu: wp.array(dtype=float), path: wp.array2d(dtype=float), i0: float,
                out: wp.array(dtype=float)):
    # detector j sees the beam after crossing each layer i over path[j, i]
    j = wp.tid()
    tau = float(0.0)
    for i in range(8):
        tau += mu[i] * path[j, i]
    out[j] = i0 * wp.exp(-tau)


@wp.kernel
def log_misfit(out: wp.array(dtype=float), meas: wp.array(dtype=float), loss: wp.array(dtype=float)):
    j = wp.tid()
    r = wp.log(out[j]) - wp.log(meas[j])
    wp.atomic_add(loss, 0, r * r + 0.1 * (out[j] - meas[j]) * (out[j] - meas[j]))
