import argparse

import numpy as np
import warp as wp


@wp.kernel
def sq_loss(w: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = w[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=4)
    ap.add_argument("--zero", action="store_true")
    args = ap.parse_args()
    t = wp.array(np.array([1.0, -2.0, 0.5]), dtype=wp.float64)
    w = wp.array(np.zeros(3), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq_loss, dim=3, inputs=[w, t, loss])
        tape.backward(loss)
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        if args.zero:
            tape.zero()
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")


if __name__ == "__main__":
    main()
