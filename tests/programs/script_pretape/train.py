import argparse

import numpy as np
import warp as wp


@wp.kernel
def source(theta: wp.array(dtype=wp.float64), src: wp.array(dtype=wp.float64)):
    i = wp.tid()
    src[i] = theta[i] * theta[i]


@wp.kernel
def fit(src: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = src[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--inside", action="store_true")
    args = ap.parse_args()
    t = wp.array(np.array([1.0, 4.0, 0.25]), dtype=wp.float64)
    theta = wp.array(np.array([0.5, 1.0, 2.0]), dtype=wp.float64, requires_grad=True)
    src = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    for it in range(5):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        if not args.inside:
            wp.launch(source, dim=3, inputs=[theta, src])
        with tape:
            if args.inside:
                wp.launch(source, dim=3, inputs=[theta, src])
            wp.launch(fit, dim=3, inputs=[src, t, loss])
        tape.backward(loss)
        theta.assign(theta.numpy() - 0.01 * theta.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
