"""Least squares fit w * x ~ y whose params live in two buffers allocated once: each update writes
w - lr * grad into the other buffer and the script swaps the names. --zero says which .grad is
zeroed after the update: ``both`` (through the tape), ``none``."""
import argparse

import numpy as np
import warp as wp


@wp.kernel
def residual_sq(w: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float),
                loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[i] * x[i] - y[i]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def step_into(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zero", default="both")
    ap.add_argument("--iters", type=int, default=6)
    args = ap.parse_args()
    x = wp.array(np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32))
    y = wp.array(np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32))
    wa = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    wb = wp.zeros(4, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    for it in range(args.iters):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(residual_sq, dim=4, inputs=[wa, x, y, loss])
        tape.backward(loss)
        wp.launch(step_into, dim=4, inputs=[wa, wa.grad, 0.05], outputs=[wb])
        if args.zero == "both":
            tape.zero()
        wa, wb = wb, wa
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
