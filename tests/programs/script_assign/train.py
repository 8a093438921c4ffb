import argparse

import numpy as np
import warp as wp


@wp.kernel
def residual_sq(w: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float),
                loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[i] * x[i] - y[i]
    wp.atomic_add(loss, 0, r * r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    x = wp.array(rng.uniform(0.5, 1.5, 4).astype(np.float32))
    y = wp.array(rng.uniform(-1.0, 1.0, 4).astype(np.float32))
    w = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    for it in range(args.iters):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(residual_sq, dim=4, inputs=[w, x, y, loss])
        tape.backward(loss)
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")
        w.assign(w.numpy() - args.lr * w.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
