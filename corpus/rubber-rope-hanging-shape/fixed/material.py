import warp as wp


@wp.func
def slog(x: wp.float64):
    return wp.log(wp.max(x, wp.float64(1.0e-6)))


@wp.func_grad(slog)
def adj_slog(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += adj_ret / wp.max(x, wp.float64(1.0e-6))


@wp.func
def neo_hookean_1d(J: wp.float64, mu: wp.float64, lam: wp.float64):
    lj = slog(J)
    half = wp.float64(0.5)
    return half * mu * (J * J - wp.float64(1.0)) - mu * lj + half * lam * lj * lj
