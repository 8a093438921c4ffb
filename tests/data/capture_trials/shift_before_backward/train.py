"""Least squares fit w * x ~ y with a heavy-ball step split in two kernels: ``shift`` adds beta * v to w and
``step`` applies the gradient (v <- beta v - lr g, w <- w - lr g). --shift says where ``shift`` is launched: after
the backward ("after") or between the tape block and the backward ("before": the tape's adjoint then reads the
shifted w)."""
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
def shift(w: wp.array(dtype=float), v: wp.array(dtype=float), beta: float):
    i = wp.tid()
    w[i] = w[i] + beta * v[i]


@wp.kernel
def step(w: wp.array(dtype=float), g: wp.array(dtype=float), v: wp.array(dtype=float), beta: float, lr: float):
    i = wp.tid()
    v[i] = beta * v[i] - lr * g[i]
    w[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shift", default="after")
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    x = wp.array(np.array([1.0, 2.0, -1.0, 0.5], dtype=np.float32))
    y = wp.array(np.array([0.5, 1.0, 2.0, -1.0], dtype=np.float32))
    w = wp.array(np.array([0.5, -0.25, 1.0, 2.0], dtype=np.float32), requires_grad=True)
    v = wp.zeros(4, dtype=float)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = wp.zeros(1, dtype=float, requires_grad=True)
            wp.launch(residual_sq, dim=4, inputs=[w, x, y, loss])
        if args.shift == "before":
            wp.launch(shift, dim=4, inputs=[w, v, 0.5])
        tape.backward(loss)
        if args.shift == "after":
            wp.launch(shift, dim=4, inputs=[w, v, 0.5])
        wp.launch(step, dim=4, inputs=[w, w.grad, v, 0.5, 0.05])
        tape.zero()
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
