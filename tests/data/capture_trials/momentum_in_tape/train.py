"""Least squares fit w * x ~ y with hand-written heavy-ball momentum: ``velocity`` mixes the gradient into v
(v <- beta v - lr g) and ``apply`` moves w (w <- w + v). --apply says where ``apply`` is launched: inside
``with tape:`` after the forward and before the backward ("inside": the next iteration's update applies the
previous backward's gradient while the tape records), or after ``velocity``, outside the tape ("after")."""
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
def velocity(v: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, beta: float):
    i = wp.tid()
    v[i] = beta * v[i] - lr * g[i]


@wp.kernel
def apply(w: wp.array(dtype=float), v: wp.array(dtype=float)):
    i = wp.tid()
    w[i] = w[i] + v[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--apply", default="after")
    ap.add_argument("--iters", type=int, default=4)
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
            if args.apply == "inside":
                wp.launch(apply, dim=4, inputs=[w, v])
        tape.backward(loss)
        wp.launch(velocity, dim=4, inputs=[v, w.grad, 0.05, 0.5])
        if args.apply == "after":
            wp.launch(apply, dim=4, inputs=[w, v])
        tape.zero()
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
