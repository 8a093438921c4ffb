import argparse

import numpy as np
import warp as wp


@wp.kernel
def terms(w: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), fit: wp.array(dtype=wp.float64),
          reg: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = w[i] - t[i]
    fit[i] = d * d
    reg[i] = w[i] * w[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lam", type=float, default=0.3)
    ap.add_argument("--match", action="store_true")
    args = ap.parse_args()
    t = wp.array(np.array([1.0, -2.0, 0.5, 3.0]), dtype=wp.float64)
    w = wp.array(np.array([0.2, 0.1, -0.3, 0.4]), dtype=wp.float64, requires_grad=True)
    for it in range(3):
        fit = wp.zeros(4, dtype=wp.float64, requires_grad=True)
        reg = wp.zeros(4, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(terms, dim=4, inputs=[w, t], outputs=[fit, reg])
        lam_seed = args.lam if args.match else 1.0
        tape.backward(grads={fit: wp.full(4, 0.25, dtype=wp.float64), reg: wp.full(4, lam_seed, dtype=wp.float64)})
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()
        total = fit.numpy().mean() + args.lam * reg.numpy().sum()
        print(f"iter {it} objective {total:.4e}")


if __name__ == "__main__":
    main()
