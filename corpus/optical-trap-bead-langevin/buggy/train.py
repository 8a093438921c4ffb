import argparse

import numpy as np
import warp as wp

from traps import TrapArray


class Calibrator:
    def __init__(self, traps, k0=5.0, sigma0=0.3):
        self.traps = traps
        dev = traps.device
        self.stiffness = wp.full(traps.beads, k0, dtype=wp.float64, device=dev, requires_grad=True)
        self.log_sigma = wp.full(traps.beads, float(np.log(sigma0)), dtype=wp.float64, device=dev, requires_grad=True)
        self.opt_state = {}

    def loss(self):
        return float(self.traps.run(self.stiffness, self.log_sigma).numpy()[0])

    def grads(self):
        tape = wp.Tape()
        with tape:
            m = self.traps.run(self.stiffness, self.log_sigma)
        tape.backward(m)
        out = {"stiffness": self.stiffness.grad.numpy().copy(), "log_sigma": self.log_sigma.grad.numpy().copy()}
        tape.zero()
        return float(m.numpy()[0]), out

    def adam(self, name, arr, g, lr, t):
        m, v = self.opt_state.get(name, (np.zeros_like(g), np.zeros_like(g)))
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        self.opt_state[name] = (m, v)
        arr.assign(arr.numpy() - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-12))

    def fit(self, iters, lr=0.05, resample=False, verbose=False):
        hist = []
        for t in range(1, iters + 1):
            if resample:
                self.traps.seed += 1
            value, g = self.grads()
            hist.append(value)
            self.adam("stiffness", self.stiffness, g["stiffness"], lr, t)
            self.adam("log_sigma", self.log_sigma, g["log_sigma"], lr, t)
            if verbose:
                print(f"{t:4d} misfit {value:.6f}")
        return hist


def main():
    ap = argparse.ArgumentParser(description="calibrate optical trap stiffness and bead noise from tracked positions")
    ap.add_argument("--beads", type=int, default=64)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--resample", action="store_true")
    args = ap.parse_args()
    wp.init()
    cal = Calibrator(TrapArray(args.beads, args.steps, seed=args.seed))
    cal.fit(args.iters, resample=args.resample, verbose=True)


if __name__ == "__main__":
    main()
