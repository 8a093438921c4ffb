"""Least-squares polynomial fit of noisy samples; objective is the mean squared residual."""
import argparse

import numpy as np
import warp as wp
import warp.optim

wp.config.quiet = True

DEGREE = wp.constant(4)


@wp.kernel
def squared_residuals(
    coeffs: wp.array(dtype=float),
    xs: wp.array(dtype=float),
    ys: wp.array(dtype=float),
    out: wp.array(dtype=float),
):
    i = wp.tid()
    x = xs[i]
    p = coeffs[DEGREE]
    for k in range(DEGREE):
        p = p * x + coeffs[DEGREE - 1 - k]
    r = p - ys[i]
    out[i] = r * r


def make_samples(n, seed=5):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-1.0, 1.0, size=n))
    y = 0.5 - 1.2 * x + 0.8 * x**3 + 0.05 * rng.normal(size=n)
    return x, y


def objective(sq):
    return float(sq.numpy().mean())


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args(argv)

    x, y = make_samples(args.samples)
    xs = wp.array(x, dtype=float)
    ys = wp.array(y, dtype=float)
    coeffs = wp.zeros(DEGREE + 1, dtype=float, requires_grad=True)
    sq = wp.zeros(args.samples, dtype=float, requires_grad=True)
    seed = wp.ones(args.samples, dtype=float)

    opt = warp.optim.SGD([coeffs], lr=args.lr)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            wp.launch(squared_residuals, dim=args.samples, inputs=[coeffs, xs, ys], outputs=[sq])
        tape.backward(grads={sq: seed})
        opt.step([coeffs.grad])
        tape.zero()
        if it % 40 == 0:
            print(f"iter {it:4d}  mse {objective(sq):.6f}")
    print("coefficients:", np.round(coeffs.numpy(), 3))


if __name__ == "__main__":
    main()
