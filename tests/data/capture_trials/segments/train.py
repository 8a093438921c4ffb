"""A two-segment chain s = w * w, loss = sum((s - t)^2) and per-window losses; --mode picks how the
iteration splits its backward passes (windows summed into .grad, checkpoint segments handing the adjoint on)."""
import argparse

import numpy as np
import warp as wp


@wp.kernel
def square(w: wp.array(dtype=float), s: wp.array(dtype=float)):
    i = wp.tid()
    s[i] = w[i] * w[i]


@wp.kernel
def misfit(s: wp.array(dtype=float), t: wp.array(dtype=float), off: int, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = s[off + i] - t[off + i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def sgd(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="windows")
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    t = wp.array(np.array([1.0, 0.5, 2.0, 0.25], dtype=np.float32))
    w = wp.array(np.array([0.5, -0.75, 1.25, 1.5], dtype=np.float32), requires_grad=True)
    for it in range(args.iters):
        total = 0.0
        if args.mode in ("windows", "windows_zeroed"):
            for win in range(2):
                if args.mode == "windows_zeroed":
                    w.grad.zero_()
                s = wp.zeros(4, dtype=float, requires_grad=True)
                loss = wp.zeros(1, dtype=float, requires_grad=True)
                tape = wp.Tape()
                with tape:
                    wp.launch(square, dim=4, inputs=[w, s])
                    wp.launch(misfit, dim=2, inputs=[s, t, 2 * win, loss])
                tape.backward(loss)
                total += float(loss.numpy()[0])
        else:
            s = wp.zeros(4, dtype=float, requires_grad=True)
            loss = wp.zeros(1, dtype=float, requires_grad=True)
            t1, t2 = wp.Tape(), wp.Tape()
            with t1:
                wp.launch(square, dim=4, inputs=[w, s])
            with t2:
                wp.launch(misfit, dim=4, inputs=[s, t, 0, loss])
            t2.backward(loss)
            adj = wp.clone(s.grad)
            if args.mode == "checkpoint_zeroed":
                adj.zero_()
            t1.backward(grads={s: adj})
            total = float(loss.numpy()[0])
        wp.launch(sgd, dim=4, inputs=[w, w.grad, 0.01])
        w.grad.zero_()
        print("loss", total)


if __name__ == "__main__":
    main()
