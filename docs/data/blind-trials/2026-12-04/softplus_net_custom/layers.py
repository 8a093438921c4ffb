import warp as wp


@wp.func
def softplus(x: float):
    # numerically stable log(1 + exp(x))
    return wp.max(x, 0.0) + wp.log(1.0 + wp.exp(-wp.abs(x)))


@wp.func_grad(softplus)
def adj_softplus(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret / (1.0 + wp.exp(x))


@wp.kernel
def forward(x: wp.array(dtype=float), w: wp.array(dtype=float), b: wp.array(dtype=float),
            v: wp.array(dtype=float), y: wp.array(dtype=float)):
    j, k = wp.tid()
    wp.atomic_add(y, j, v[k] * softplus(w[k] * x[j] + b[k]))


@wp.kernel
def huber(y: wp.array(dtype=float), t: wp.array(dtype=float), delta: float, loss: wp.array(dtype=float)):
    j = wp.tid()
    d = wp.abs(y[j] - t[j])
    l = float(0.0)
    if d < delta:
        l = 0.5 * d * d
    else:
        l = delta * (d - 0.5 * delta)
    wp.atomic_add(loss, 0, l / float(y.shape[0]))
