import argparse

import numpy as np
import warp as wp

from canopy import Canopy


class RateFit:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.data_seed)
        self.canopy = Canopy(args.points, args.nozzles, rng, device)
        start = np.full(args.nozzles, args.nominal_rate, dtype=np.float32)
        self.rate = wp.array(start, dtype=float, requires_grad=True, device=device)
        self.lr = args.lr
        self.params = {"rate": self.rate}

    def loss(self):
        return float(self.canopy.loss(self.rate).numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.canopy.loss(self.rate)
        tape.backward(loss)
        g = {"rate": self.rate.grad.numpy().copy()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        self.rate.assign(np.maximum(self.rate.numpy() - self.lr * g["rate"], 0.0))
        return self.loss()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="worn nozzle flow rates of an orchard sprayer from deposit readings")
    p.add_argument("--points", type=int, default=50000)
    p.add_argument("--nozzles", type=int, default=12)
    p.add_argument("--nominal-rate", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--data-seed", type=int, default=8)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    fit = RateFit(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        loss = fit.step()
        if it % 10 == 0:
            print(f"iter {it:4d}  misfit {loss:.2f}")
    print("rates", fit.rate.numpy())


if __name__ == "__main__":
    main()
