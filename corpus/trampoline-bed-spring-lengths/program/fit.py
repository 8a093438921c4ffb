import argparse

import numpy as np
import warp as wp

from springs import SpringBed


class RestLengthFit:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.seed)
        self.bed = SpringBed(args.columns, device, rng)
        self.rest = wp.array(0.97 * self.bed.drawn_lengths, dtype=wp.float64, requires_grad=True, device=device)
        self.lr = args.lr
        self.params = {"rest": self.rest}
        self.tape = wp.Tape()

    def misfit(self):
        return float(self.bed.evaluate(self.rest).numpy()[0])

    def compute_gradients(self):
        self.tape = wp.Tape()
        with self.tape:
            loss = self.bed.evaluate(self.rest)
        self.tape.backward(loss)
        g = {"rest": self.rest.grad.numpy().copy()}
        self.rest.grad.zero_()
        self.tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        self.rest.assign(self.rest.numpy() - self.lr * g["rest"])
        return self.misfit()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="rest lengths of a trampoline bed's springs from measured loads")
    p.add_argument("--columns", type=int, default=4)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--seed", type=int, default=19)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    fit = RestLengthFit(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        m = fit.step()
        if it % 30 == 0:
            print(f"iter {it:4d}  load misfit {m:.6f}")


if __name__ == "__main__":
    main()
