import warp as wp


@wp.func
def soft(x: wp.float64):
    return x * x


@wp.func_grad(soft)
def adj_soft(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += wp.float64(2.0) * x * adj_ret


@wp.kernel
def shade(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    u = wp.vec2d(a[i], wp.float64(1.0))
    r = wp.sqrt(wp.dot(u, u) + wp.float64(1.0e-9))
    g = wp.where(r > wp.float64(0.5), a[i] / wp.max(r, wp.float64(1.0e-9)), r)
    acc = wp.float64(1.0)
    for k in range(3):
        acc = acc * b[i]
    out[i] = soft(acc) + g
    out[i] = out[i] * r


def run(a, b, out, n):
    wp.launch(shade, dim=n, inputs=[a, b], outputs=[out])
