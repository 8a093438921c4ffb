import argparse

import numpy as np
import warp as wp


@wp.func
def filmic(x: wp.float64, a: wp.float64, b: wp.float64, c: wp.float64):
    return x * (a * x + b) / (x * (a * x + c) + wp.float64(0.14))


@wp.kernel
def pixel_error(
    hdr: wp.array(dtype=wp.float64),
    ref: wp.array(dtype=wp.float64),
    curve: wp.array(dtype=wp.float64),
    err: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    y = filmic(hdr[i], curve[0], curve[1], curve[2])
    d = y - ref[i]
    err[i] = d * d


def load_pair(pixels, seed):
    rng = np.random.default_rng(seed)
    hdr = rng.lognormal(-1.0, 1.0, pixels)
    a, b, c = 2.51, 0.03, 2.43
    ref = hdr * (a * hdr + b) / (hdr * (a * hdr + c) + 0.14)
    ref = np.clip(ref + rng.normal(0.0, 0.005, pixels), 0.0, 1.0)
    return hdr, ref


def main():
    ap = argparse.ArgumentParser(description="match a filmic tone curve to a reference rendering")
    ap.add_argument("--pixels", type=int, default=256)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    hdr_np, ref_np = load_pair(args.pixels, args.seed)
    hdr = wp.array(hdr_np, dtype=wp.float64)
    ref = wp.array(ref_np, dtype=wp.float64)
    curve = wp.array([2.0, 0.1, 2.0], dtype=wp.float64, requires_grad=True)
    err = wp.zeros(args.pixels, dtype=wp.float64, requires_grad=True)
    n = args.pixels

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            wp.launch(pixel_error, dim=n, inputs=[hdr, ref, curve], outputs=[err])
        tape.backward(grads={err: wp.ones(n, dtype=wp.float64)})
        curve.assign(curve.numpy() - args.lr * curve.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  mse {err.numpy().mean():.6f}  curve {curve.numpy()}")


if __name__ == "__main__":
    main()
