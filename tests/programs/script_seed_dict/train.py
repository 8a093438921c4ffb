import argparse

import numpy as np
import warp as wp


@wp.kernel
def sq_err(w: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), e: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = w[i] - t[i]
    e[i] = d * d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args()
    t = wp.array(np.array([1.0, -1.0, 0.5]), dtype=wp.float64)
    w = wp.array(np.zeros(3), dtype=wp.float64, requires_grad=True)
    seed = wp.full(3, 1.0 / 3.0, dtype=wp.float64)
    for it in range(4):
        e = wp.zeros(3, dtype=wp.float64)
        tape = wp.Tape()
        with tape:
            wp.launch(sq_err, dim=3, inputs=[w, t], outputs=[e])
        tape.backward(grads={e: wp.full(3, 1.0 / 3.0, dtype=wp.float64) if args.fresh else seed})
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()
        print(f"iter {it} mse {float(np.mean(e.numpy())):.6f}")


if __name__ == "__main__":
    main()
