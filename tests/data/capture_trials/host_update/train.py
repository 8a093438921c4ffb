"""Least squares fit w * x ~ y: a fresh tape and loss array per iteration, the update through host values
(w.assign(w.numpy() - lr * w.grad.numpy())), then tape.zero()."""
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
    ap.add_argument("--iters", type=int, default=4)
    args = ap.parse_args()
    x = wp.array(np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32))
    y = wp.array(np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32))
    w = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = wp.zeros(1, dtype=float, requires_grad=True)
            wp.launch(residual_sq, dim=4, inputs=[w, x, y, loss])
        tape.backward(loss)
        w.assign(w.numpy() - 0.05 * w.grad.numpy())
        tape.zero()
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")


if __name__ == "__main__":
    main()
