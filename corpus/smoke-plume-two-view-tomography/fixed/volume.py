import warp as wp


@wp.func
def softplus(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.func_grad(softplus)
def adj_softplus(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret / (1.0 + wp.exp(-x))


@wp.kernel
def densities(
    raw: wp.array2d(dtype=float),
    prior_mean: float,
    prior_weight: float,
    sigma: wp.array2d(dtype=float),
    prior: wp.array(dtype=float),
):
    i, j = wp.tid()
    r = raw[i, j]
    sigma[i, j] = softplus(r)
    d = r - prior_mean
    wp.atomic_add(prior, 0, prior_weight * d * d)


@wp.kernel
def march(
    sigma: wp.array2d(dtype=float),
    ds: float,
    depth_rows: wp.array(dtype=float),
    depth_cols: wp.array(dtype=float),
):
    i, j = wp.tid()
    tau = sigma[i, j] * ds
    wp.atomic_add(depth_rows, i, tau)
    wp.atomic_add(depth_cols, j, tau)


@wp.kernel
def shade(
    depth: wp.array(dtype=float),
    backlight: float,
    pixels: wp.array(dtype=float),
    observed: wp.array(dtype=float),
    weight: float,
    loss: wp.array(dtype=float),
):
    k = wp.tid()
    value = backlight * wp.exp(-depth[k])
    pixels[k] = value
    e = value - observed[k]
    wp.atomic_add(loss, 0, weight * e * e)
