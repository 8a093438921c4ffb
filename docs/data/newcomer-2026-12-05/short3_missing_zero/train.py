# Three iterations of SGD on a small spring-chain rest-length fit. A new wp.Tape() each iteration,
# but nothing zeroes the gradients. BUG (missing_tape_zero): iteration 2 consumes g1 + g2.
import numpy as np
import warp as wp

wp.init()
N = 10

@wp.kernel
def chain(r: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = wp.sin(r[i]) + r[i] * r[i]

@wp.kernel
def loss_k(x: wp.array(dtype=float), t: wp.array(dtype=float), L: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - t[i]
    wp.atomic_add(L, 0, d * d)

@wp.kernel
def sgd(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    p[i] = p[i] - lr * g[i]

def main(iters=3):
    rng = np.random.default_rng(4)
    t = wp.array(rng.uniform(0.5, 1.5, N), dtype=float)
    r = wp.array(rng.uniform(0.2, 0.8, N), dtype=float, requires_grad=True)
    for it in range(iters):
        x = wp.zeros(N, dtype=float, requires_grad=True)
        L = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(chain, dim=N, inputs=[r, x])
            wp.launch(loss_k, dim=N, inputs=[x, t, L])
        tape.backward(L)
        wp.launch(sgd, dim=N, inputs=[r, r.grad, 0.05])
        print(f"iter {it} loss {L.numpy()[0]:.6f}")

if __name__ == "__main__":
    main()
