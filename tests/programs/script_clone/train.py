import argparse

import numpy as np
import warp as wp


@wp.kernel
def sq_loss(v: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = v[i] * v[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--outside", action="store_true")
    ap.add_argument("--copy", action="store_true")
    args = ap.parse_args()
    t = wp.array(np.array([1.0, 4.0, 0.25]), dtype=wp.float64)
    v0 = wp.array(np.array([0.5, 1.0, 2.0]), dtype=wp.float64, requires_grad=True)
    for it in range(3):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        v = wp.clone(v0) if args.outside else None
        tape = wp.Tape()
        with tape:
            if args.copy:
                v = wp.zeros_like(v0)
                wp.copy(v, v0)
            elif not args.outside:
                v = wp.clone(v0)
            wp.launch(sq_loss, dim=3, inputs=[v, t], outputs=[loss])
        tape.backward(loss)
        v0.assign(v0.numpy() - 0.01 * v0.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
