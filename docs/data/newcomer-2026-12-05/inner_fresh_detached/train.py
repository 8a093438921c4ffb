# Fit stiffnesses k: settle u*(k) each outer iteration (fresh u = wp.zeros, 200 small-tape GD steps),
# then an outer tape records the data misfit on u and a prior on k. BUG: the outer tape never sees
# how u* depends on k (the settle ran off the outer tape, no adjoint solve): only the prior's gradient.
import numpy as np
import warp as wp

wp.init()
N = 8

@wp.kernel
def energy(k: wp.array(dtype=float), f: wp.array(dtype=float), u: wp.array(dtype=float), E: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(E, 0, 0.5 * k[i] * u[i] * u[i] - f[i] * u[i])

@wp.kernel
def sgd(x: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    x[i] = x[i] - lr * g[i]

@wp.kernel
def fit_loss(u: wp.array(dtype=float), t: wp.array(dtype=float), k: wp.array(dtype=float), k0: wp.array(dtype=float),
             reg: float, L: wp.array(dtype=float)):
    i = wp.tid()
    d = u[i] - t[i]
    r = k[i] - k0[i]
    wp.atomic_add(L, 0, d * d + reg * r * r)

def main(iters=25):
    f = wp.array(1.0 + 0.2 * np.arange(N), dtype=float)
    k_true = 2.0 + 0.1 * np.arange(N)
    t = wp.array(f.numpy() / k_true, dtype=float)
    k = wp.array(1.5 + 0.03 * np.arange(N), dtype=float, requires_grad=True)
    k0 = wp.array(np.full(N, 1.8), dtype=float)
    E = wp.zeros(1, dtype=float, requires_grad=True)
    for it in range(iters):
        u = wp.zeros(N, dtype=float, requires_grad=True)
        for s in range(200):
            E.zero_()
            t_in = wp.Tape()
            with t_in:
                wp.launch(energy, dim=N, inputs=[k, f, u, E])
            t_in.backward(E)
            wp.launch(sgd, dim=N, inputs=[u, u.grad, 0.4])
            t_in.zero()
        L = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(fit_loss, dim=N, inputs=[u, t, k, k0, 0.01, L])
        tape.backward(L)
        wp.launch(sgd, dim=N, inputs=[k, k.grad, 0.5])
        print(f"iter {it} loss {L.numpy()[0]:.6e}")
        tape.zero()

if __name__ == "__main__":
    main()
