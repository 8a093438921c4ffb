"""Quantisation-aware fit of a 5-tap FIR filter whose taps are stored on a 1/8 grid.

Forward uses the rounded taps; the rounding passes the gradient straight through."""
import numpy as np
import warp as wp

TAPS = 5
T = 48
STEP = 0.125


@wp.func
def quantize(h: float, step: float):
    return wp.round(h / step) * step


@wp.func_grad(quantize)
def adj_quantize(h: float, step: float, adj_ret: float):
    wp.adjoint[h] += adj_ret


@wp.kernel
def fir(u: wp.array(dtype=float), h: wp.array(dtype=float), step: float, y: wp.array(dtype=float)):
    t, k = wp.tid()
    if t - k >= 0:
        wp.atomic_add(y, t, quantize(h[k], step) * u[t - k])


@wp.kernel
def sq_err(y: wp.array(dtype=float), d: wp.array(dtype=float), loss: wp.array(dtype=float)):
    t = wp.tid()
    e = y[t] - d[t]
    wp.atomic_add(loss, 0, e * e / float(y.shape[0]))


@wp.kernel
def sgd(h: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    k = wp.tid()
    h[k] = h[k] - lr * g[k]


def signals():
    rng = np.random.default_rng(9)
    u = rng.standard_normal(T)
    h_true = np.array([0.61, -0.32, 0.18, 0.07, -0.04])
    d = np.convolve(u, h_true)[:T]
    return u, d


def main(iters=30, lr=0.1):
    u_np, d_np = signals()
    u = wp.array(u_np, dtype=float)
    d = wp.array(d_np, dtype=float)
    h = wp.array([0.3, 0.0, 0.0, 0.0, 0.02], dtype=float, requires_grad=True)
    for it in range(iters):
        y = wp.zeros(T, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(fir, dim=(T, TAPS), inputs=[u, h, STEP], outputs=[y])
            wp.launch(sq_err, dim=T, inputs=[y, d], outputs=[loss])
        tape.backward(loss)
        wp.launch(sgd, dim=TAPS, inputs=[h, h.grad, lr])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d} loss {loss.numpy()[0]:.6f} taps {np.round(h.numpy(), 3)}")


if __name__ == "__main__":
    main()
