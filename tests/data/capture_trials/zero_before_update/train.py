"""Least squares fit w * x ~ y with a hand-written SGD kernel; --order says what happens to the
gradient between the backward and the update."""
import argparse

import numpy as np
import warp as wp
import warp.optim


@wp.kernel
def residual_sq(w: wp.array(dtype=float), x: wp.array(dtype=float), y: wp.array(dtype=float),
                loss: wp.array(dtype=float)):
    i = wp.tid()
    r = w[i] * x[i] - y[i]
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def sgd(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--order", default="ok")
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    x = wp.array(np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32))
    y = wp.array(np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32))
    w = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    opt = warp.optim.SGD([w], lr=0.05)
    for it in range(args.iters):
        loss.zero_()
        with tape:
            wp.launch(residual_sq, dim=4, inputs=[w, x, y, loss])
        tape.backward(loss)
        if args.order == "ok":
            wp.launch(sgd, dim=4, inputs=[w, w.grad, 0.05])
            tape.zero()
        elif args.order == "zero_tape":
            tape.zero()
            wp.launch(sgd, dim=4, inputs=[w, w.grad, 0.05])
        elif args.order == "zero_grad":
            w.grad.zero_()
            wp.launch(sgd, dim=4, inputs=[w, w.grad, 0.05])
        elif args.order == "clone_ok":
            g = wp.clone(w.grad)
            tape.zero()
            wp.launch(sgd, dim=4, inputs=[w, g, 0.05])
        elif args.order == "clone_zero":
            g = wp.clone(w.grad)
            g.zero_()
            wp.launch(sgd, dim=4, inputs=[w, g, 0.05])
            tape.zero()
        elif args.order == "numpy_ok":
            g = w.grad.numpy().copy()
            tape.zero()
            w.assign(w.numpy() - 0.05 * g)
        elif args.order == "numpy_zero":
            tape.zero()
            g = w.grad.numpy().copy()
            w.assign(w.numpy() - 0.05 * g)
        elif args.order == "overwrite":
            w.grad.assign(np.ones(4, dtype=np.float32))
            wp.launch(sgd, dim=4, inputs=[w, w.grad, 0.05])
            tape.zero()
        elif args.order == "optim_ok":
            opt.step([w.grad])
            tape.zero()
        elif args.order == "optim_zero":
            tape.zero()
            opt.step([w.grad])
        tape.reset()
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
