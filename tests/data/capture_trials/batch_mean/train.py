"""Fit w * x ~ y over three mini-batches, one tape and one backward(loss) per batch, the gradients accumulated
into w.grad and applied once per epoch; the script prints the epoch's loss as --report says (the mean over the
batches, or their sum)."""
import argparse

import numpy as np
import warp as wp


@wp.kernel
def batch_sq(w: wp.array(dtype=wp.float64), x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
             loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    r = w[i % 2] * x[i] - y[i]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def sgd(w: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", default="mean")
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()
    xs = [np.array([1.0, 2.0, -1.0, 0.5]), np.array([0.5, -2.0, 1.5, 1.0]), np.array([2.0, 1.0, -0.5, -1.0])]
    ys = [np.array([0.5, 1.0, 2.0, -1.0]), np.array([1.0, 0.0, -1.0, 2.0]), np.array([-1.0, 0.5, 0.5, 1.5])]
    batches = [(wp.array(x, dtype=wp.float64), wp.array(y, dtype=wp.float64)) for x, y in zip(xs, ys)]
    w = wp.array(np.array([0.5, -0.25]), dtype=wp.float64, requires_grad=True)
    for epoch in range(args.epochs):
        total = 0.0
        for x, y in batches:
            tape = wp.Tape()
            with tape:
                loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
                wp.launch(batch_sq, dim=4, inputs=[w, x, y, loss])
            tape.backward(loss)
            total += float(loss.numpy()[0])
        wp.launch(sgd, dim=2, inputs=[w, w.grad, wp.float64(0.01)])
        w.grad.zero_()
        shown = total / len(batches) if args.report == "mean" else total
        print(f"epoch {epoch} loss {shown:.8e}")


if __name__ == "__main__":
    main()
