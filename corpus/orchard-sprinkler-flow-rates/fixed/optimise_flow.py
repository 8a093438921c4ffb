import argparse

import warp as wp
import warp.optim

from irrigation import Orchard


def main():
    ap = argparse.ArgumentParser(description="choose sprinkler flow rates for uniform orchard watering")
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--nozzles", type=int, default=6)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()

    orchard = Orchard(args.rows, args.nozzles, args.seed)
    opt = warp.optim.SGD([orchard.rates], lr=args.lr, momentum=0.9)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            cov = orchard.coverage()
            loss = orchard.uniformity_loss(cov)
        tape.backward(loss)
        opt.step([orchard.rates.grad])
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  non-uniformity {loss.numpy()[0]:.5f}")
    print("rates", orchard.rates.numpy())


if __name__ == "__main__":
    main()
