import argparse

import numpy as np
import warp as wp


@wp.kernel
def energy(w: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = w[i] - target[i]
    wp.atomic_add(loss, 0, 0.5 * d * d * float(i + 1))


@wp.kernel
def sgd(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=4)
    args = ap.parse_args()
    target = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    w = wp.zeros(3, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    for it in range(args.iters):
        loss.zero_()
        with tape:
            wp.launch(energy, dim=3, inputs=[w, target, loss])
        tape.backward(loss=loss)
        wp.launch(sgd, dim=3, inputs=[w, w.grad, 0.1])
        tape.zero()
        tape.reset()
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
