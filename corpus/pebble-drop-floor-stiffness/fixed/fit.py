import argparse
import math

import numpy as np
import warp as wp

from bed import PebbleBed


def misfit_gradient(bed, log_k):
    tape = wp.Tape()
    with tape:
        misfit = bed.simulate(log_k)
    tape.backward(misfit)
    grad = log_k.grad.numpy().copy()
    tape.zero()
    return float(misfit.numpy()[0]), grad


def run_sgd(bed, log_k, iters, lr=0.5, momentum=0.9, verbose=False):
    vel = np.zeros(log_k.shape[0])
    losses = []
    for it in range(iters):
        loss, grad = misfit_gradient(bed, log_k)
        losses.append(loss)
        vel = momentum * vel - lr * grad
        log_k.assign(log_k.numpy() + vel)
        if verbose:
            print(f"{it:3d}  misfit {loss:.5e}  k range {np.exp(log_k.numpy()).min():.1f}..{np.exp(log_k.numpy()).max():.1f}")
    return losses


def main():
    ap = argparse.ArgumentParser(description="fit per-pebble floor stiffness from drop tests")
    ap.add_argument("-n", type=int, default=32)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--dt", type=float, default=5e-4)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--k0", type=float, default=5.0e3)
    args = ap.parse_args()
    wp.init()
    bed = PebbleBed(args.n, args.frames, args.dt, "cpu")
    log_k = wp.full(args.n, math.log(args.k0), dtype=wp.float64, device="cpu", requires_grad=True)
    run_sgd(bed, log_k, args.iters, verbose=True)


if __name__ == "__main__":
    main()
