"""Fit w * x ~ y plus a ridge prior 0.5 * lam * |w|^2 taped on its own; the update adds the prior's gradient, kept
in a buffer, to the data term's .grad. --prior says when the prior's gradient is computed: once before the loop
("once") or in every iteration ("each")."""
import argparse

import numpy as np
import warp as wp


@wp.kernel
def data_sq(w: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float),
            loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[i] * x[i] - y[i]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def ridge(w: wp.array(dtype=float), lam: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, 0.5 * lam * w[i] * w[i])


@wp.kernel
def step(w: wp.array(dtype=float), g: wp.array(dtype=float), gp: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * (g[i] + gp[i])


def prior_gradient(w, out):
    tape = wp.Tape()
    with tape:
        reg = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(ridge, dim=4, inputs=[w, 2.0, reg])
    tape.backward(reg)
    wp.copy(out, w.grad)
    tape.zero()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prior", default="each")
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    x = wp.array(np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32))
    y = wp.array(np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32))
    w = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    gp = wp.zeros(4, dtype=float)
    if args.prior == "once":
        prior_gradient(w, gp)
    for it in range(args.iters):
        if args.prior == "each":
            prior_gradient(w, gp)
        tape = wp.Tape()
        with tape:
            loss = wp.zeros(1, dtype=float, requires_grad=True)
            wp.launch(data_sq, dim=4, inputs=[w, x, y, loss])
        tape.backward(loss)
        wp.launch(step, dim=4, inputs=[w, w.grad, gp, 0.05])
        tape.zero()
        print("data loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
