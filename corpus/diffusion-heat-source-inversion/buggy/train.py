"""Recover a heat source distribution from a handful of temperature sensors."""
import argparse

import warp as wp
import warp.optim

from model import RodModel

wp.config.quiet = True


def train(iters, lr):
    model = RodModel()
    optimizer = warp.optim.Adam([model.theta], lr=lr)
    history = []
    for it in range(iters):
        tape = wp.Tape()
        with tape:
            loss = model.forward()
        tape.backward(loss)
        optimizer.step([model.theta.grad])
        tape.zero()
        value = float(loss.numpy()[0])
        history.append(value)
        if it % 10 == 0:
            print(f"step {it:4d}  sensor mse {value:.6e}")
    return model, history


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args(argv)
    model, history = train(args.iters, args.lr)
    print("final sensor mse", history[-1])


if __name__ == "__main__":
    main()
