# Fit stiffnesses k: settle u warm-started (allocated once before the loop, reused, 60 GD steps per
# outer iteration on small tapes), adjoint solve lam started afresh each outer iteration (60 steps),
# dL/dk = -lam * u assembled into k.grad. Correct (up to solve convergence, contraction <= 0.4/step).
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
def fit_loss(u: wp.array(dtype=float), t: wp.array(dtype=float), L: wp.array(dtype=float)):
    i = wp.tid()
    d = u[i] - t[i]
    wp.atomic_add(L, 0, d * d)

@wp.kernel
def assemble(lam: wp.array(dtype=float), u: wp.array(dtype=float), kg: wp.array(dtype=float)):
    i = wp.tid()
    kg[i] = -lam[i] * u[i]

def main(iters=25):
    f = wp.array(1.0 + 0.2 * np.arange(N), dtype=float)
    k_true = 2.0 + 0.1 * np.arange(N)
    t = wp.array(f.numpy() / k_true, dtype=float)
    k = wp.array(1.5 + 0.03 * np.arange(N), dtype=float, requires_grad=True)
    u = wp.zeros(N, dtype=float, requires_grad=True)   # warm start: reused across outer iterations
    E = wp.zeros(1, dtype=float, requires_grad=True)
    for it in range(iters):
        for s in range(60):
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
            wp.launch(fit_loss, dim=N, inputs=[u, t, L])
        tape.backward(L)
        lam = wp.zeros(N, dtype=float, requires_grad=True)
        for s in range(60):
            E.zero_()
            t_adj = wp.Tape()
            with t_adj:
                wp.launch(energy, dim=N, inputs=[k, u.grad, lam, E])
            t_adj.backward(E)
            wp.launch(sgd, dim=N, inputs=[lam, lam.grad, 0.4])
            t_adj.zero()
        wp.launch(assemble, dim=N, inputs=[lam, u, k.grad])
        wp.launch(sgd, dim=N, inputs=[k, k.grad, 0.5])
        print(f"iter {it} loss {L.numpy()[0]:.6e}")
        tape.zero()

if __name__ == "__main__":
    main()
