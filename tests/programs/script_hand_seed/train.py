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
    ap.add_argument("--copy", action="store_true")
    args = ap.parse_args()
    t = wp.array(np.array([1.0, -1.0, 0.5]), dtype=wp.float64)
    weights = wp.array(np.array([0.5, 0.25, 0.25]), dtype=wp.float64)
    w = wp.array(np.zeros(3), dtype=wp.float64, requires_grad=True)
    for it in range(4):
        e = wp.zeros(3, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq_err, dim=3, inputs=[w, t], outputs=[e])
        e.grad = wp.clone(weights) if args.copy else weights
        tape.backward()
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()
        print(f"iter {it} weighted loss {float(np.dot(weights.numpy(), e.numpy())):.6f}")


if __name__ == "__main__":
    main()
