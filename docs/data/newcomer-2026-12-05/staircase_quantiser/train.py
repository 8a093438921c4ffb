# Fit a smooth gain a (per channel) and a level q that goes through an int() quantiser
# (8 levels per unit) in its own kernel. Correct: dL/dq = 0 almost everywhere (piecewise_constant).
import numpy as np
import warp as wp

wp.init()
N = 16

@wp.kernel
def quantise(q: wp.array(dtype=float), z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = float(int(q[i] * 8.0)) / 8.0

@wp.kernel
def model(a: wp.array(dtype=float), x: wp.array(dtype=float), z: wp.array(dtype=float), t: wp.array(dtype=float),
          L: wp.array(dtype=float)):
    i = wp.tid()
    d = a[i] * x[i] + z[i] - t[i]
    wp.atomic_add(L, 0, d * d)

@wp.kernel
def sgd2(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    p[i] = p[i] - lr * g[i]

def main(iters=20):
    rng = np.random.default_rng(2)
    x = wp.array(rng.uniform(0.5, 1.5, N), dtype=float)
    t = wp.array(rng.uniform(0.0, 2.0, N), dtype=float)
    a = wp.array(rng.uniform(0.2, 1.0, N), dtype=float, requires_grad=True)
    q = wp.array(rng.uniform(0.1, 0.9, N), dtype=float, requires_grad=True)
    for it in range(iters):
        z = wp.zeros(N, dtype=float, requires_grad=True)
        L = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(quantise, dim=N, inputs=[q, z])
            wp.launch(model, dim=N, inputs=[a, x, z, t, L])
        tape.backward(L)
        wp.launch(sgd2, dim=N, inputs=[a, a.grad, 0.1])
        wp.launch(sgd2, dim=N, inputs=[q, q.grad, 0.1])
        tape.zero()
        print(f"iter {it} loss {L.numpy()[0]:.6f}")

if __name__ == "__main__":
    main()
