# Fit spring stiffnesses k so that the settled displacement u*(k) (k u = f) matches targets.
# Each outer iteration: a settle solve (fresh u = wp.zeros, gradient descent on the energy, small tape
# per step) and an adjoint solve (fresh lam, same way), then dL/dk = -lam * u assembled into k.grad.
import numpy as np
import warp as wp

wp.init()
N = 8
INNER = 120

@wp.kernel
def energy(k: wp.array(dtype=float), f: wp.array(dtype=float), u: wp.array(dtype=float), E: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(E, 0, 0.5 * k[i] * u[i] * u[i] - f[i] * u[i])

@wp.kernel
def sgd(x: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    x[i] = x[i] - lr * g[i]

@wp.kernel
def fit_loss(u: wp.array(dtype=float), t: wp.array(dtype=float), L: wp.array(dtype=float)):
    i = wp.tid()
    d = u[i] - t[i]
    wp.atomic_add(L, 0, d * d)

@wp.kernel
def assemble(lam: wp.array(dtype=float), u: wp.array(dtype=float), kg: wp.array(dtype=float)):
    i = wp.tid()
    kg[i] = -lam[i] * u[i]

def solve(k, rhs, iters, eta=0.4):
    x = wp.zeros(N, dtype=float, requires_grad=True)
    for _ in range(iters):
        E = wp.zeros(1, dtype=float, requires_grad=True)
        t_in = wp.Tape()
        with t_in:
            wp.launch(energy, dim=N, inputs=[k, rhs, x, E])
        t_in.backward(E)
        wp.launch(sgd, dim=N, inputs=[x, x.grad, eta])
        t_in.zero()
    return x

def main(iters=25):
    rng = np.random.default_rng(0)
    f = wp.array(1.0 + 0.2 * np.arange(N), dtype=float)
    k_true = 2.0 + 0.1 * np.arange(N)
    t = wp.array(f.numpy() / k_true, dtype=float)
    k = wp.array(1.5 + 0.05 * rng.random(N), dtype=float, requires_grad=True)
    for it in range(iters):
        u = solve(k, f, INNER)
        L = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(fit_loss, dim=N, inputs=[u, t, L])
        tape.backward(L)
        lam = solve(k, u.grad, INNER)
        wp.launch(assemble, dim=N, inputs=[lam, u, k.grad])
        wp.launch(sgd, dim=N, inputs=[k, k.grad, 0.5])
        print(f"iter {it} loss {L.numpy()[0]:.6e}")
        tape.zero()

if __name__ == "__main__":
    main()
