# Linear fit w with a quartic prior 0.05*sum(w^4). The prior's gradient is computed ONCE before the
# loop on its own tape and added by the update every iteration. BUG (stale_gradient_read): from
# iteration 2 the prior gradient is taken at the initial w, not the current one.
import numpy as np
import warp as wp

wp.init()
N, M = 6, 32

@wp.kernel
def prior(w: wp.array(dtype=float), P: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(P, 0, 0.05 * w[i] * w[i] * w[i] * w[i])

@wp.kernel
def data(w: wp.array(dtype=float), X: wp.array2d(dtype=float), y: wp.array(dtype=float), L: wp.array(dtype=float)):
    j = wp.tid()
    s = float(0.0)
    for i in range(6):
        s += X[j, i] * w[i]
    d = s - y[j]
    wp.atomic_add(L, 0, d * d / 32.0)

@wp.kernel
def step(w: wp.array(dtype=float), g: wp.array(dtype=float), gp: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * (g[i] + gp[i])

def main(iters=30):
    rng = np.random.default_rng(1)
    Xn = rng.normal(size=(M, N))
    X = wp.array(Xn, dtype=float)
    y = wp.array(Xn @ np.linspace(-1.0, 1.5, N), dtype=float)
    w = wp.array(rng.normal(size=N) * 1.5, dtype=float, requires_grad=True)

    P = wp.zeros(1, dtype=float, requires_grad=True)
    ptape = wp.Tape()
    with ptape:
        wp.launch(prior, dim=N, inputs=[w, P])
    ptape.backward(P)
    prior_grad = wp.clone(w.grad)
    ptape.zero()

    for it in range(iters):
        L = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(data, dim=M, inputs=[w, X, y, L])
        tape.backward(L)
        wp.launch(step, dim=N, inputs=[w, w.grad, prior_grad, 0.1])
        tape.zero()
        print(f"iter {it} data loss {L.numpy()[0]:.6f}")

if __name__ == "__main__":
    main()
