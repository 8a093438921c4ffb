"""Fit w * x ~ y with a prior 0.5 * lam * |w - w0|^2, the two terms backpropagated through their own tapes;
--mode says how the script combines their gradients before its SGD kernel."""
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
def prior(w: wp.array(dtype=float), w0: wp.array(dtype=float), lam: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = w[i] - w0[i]
    wp.atomic_add(loss, 0, 0.5 * lam * d * d)


@wp.kernel
def add(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] + b[i]


@wp.kernel
def sgd(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="accumulate")
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    x = wp.array(np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32))
    y = wp.array(np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32))
    w0 = wp.array(np.array([1.0, 1.0, 0.0, -1.0], dtype=np.float32))
    w = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    lp = wp.zeros(1, dtype=float, requires_grad=True)
    ld = wp.zeros(1, dtype=float, requires_grad=True)
    gsum = wp.zeros(4, dtype=float)
    tp, td = wp.Tape(), wp.Tape()
    for it in range(args.iters):
        lp.zero_()
        ld.zero_()
        with tp:
            wp.launch(prior, dim=4, inputs=[w, w0, 3.0, lp])
        tp.backward(lp)
        if args.mode in ("sum", "sum_wrong"):
            g1 = wp.clone(w.grad)
            tp.zero()
        elif args.mode == "zero_between":
            tp.zero()
        with td:
            wp.launch(residual_sq, dim=4, inputs=[w, x, y, ld])
        if args.mode == "weighted":
            td.backward(grads={ld: wp.array([0.5], dtype=float)})
        else:
            td.backward(ld)
        if args.mode == "sum":
            wp.launch(add, dim=4, inputs=[g1, w.grad, gsum])
            wp.launch(sgd, dim=4, inputs=[w, gsum, 0.02])
        elif args.mode == "sum_wrong":
            wp.launch(add, dim=4, inputs=[w.grad, w.grad, gsum])
            wp.launch(sgd, dim=4, inputs=[w, gsum, 0.02])
        else:
            wp.launch(sgd, dim=4, inputs=[w, w.grad, 0.02])
        tp.zero()
        td.zero()
        tp.reset()
        td.reset()
        print("loss", float(lp.numpy()[0] + ld.numpy()[0]))


if __name__ == "__main__":
    main()
