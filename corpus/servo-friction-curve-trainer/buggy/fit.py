import argparse

import numpy as np
import warp as wp
import warp.optim

from friction_model import FrictionModel


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.opt = warp.optim.SGD([model.theta], lr=lr)
        self.weights = wp.full(model.n, 1.0, dtype=wp.float32)

    def epoch(self):
        tape = wp.Tape()
        with tape:
            sq = self.model.per_sample()
        tape.backward(grads={sq: self.weights})
        self.opt.step([self.model.theta.grad])
        tape.zero()
        return float(np.mean(sq.numpy()))


def bench_data(samples, seed):
    rng = np.random.default_rng(seed)
    v = np.linspace(-2.0, 2.0, samples)
    tau = 0.8 * np.tanh(3.0 * v) + 0.12 * v + rng.normal(0.0, 0.01, samples)
    return v, tau


def main():
    parser = argparse.ArgumentParser(description="fit a servo friction curve (Coulomb + viscous) to bench data")
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()

    v, tau = bench_data(args.samples, args.seed)
    model = FrictionModel(v, tau)
    trainer = Trainer(model, args.lr)
    for e in range(args.epochs):
        mse = trainer.epoch()
        if e % 20 == 0:
            print(f"epoch {e:4d}  mse {mse:.6f}")
    print("coulomb, sharpness, viscous:", model.theta.numpy())


if __name__ == "__main__":
    main()
