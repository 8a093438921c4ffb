import argparse

import numpy as np
import warp as wp

from scan import SlabScan


class Inversion:
    def __init__(self, n_rays=24, device=None):
        self.scan = SlabScan(n_rays, device=device)
        self.mu = wp.full(8, 0.15, dtype=wp.float64, device=device, requires_grad=True)
        self.mom1 = np.zeros(8)
        self.mom2 = np.zeros(8)
        self.k = 0

    def misfit(self):
        return float(self.scan.misfit(self.mu).numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self.scan.misfit(self.mu)
        tape.backward(out)
        g = self.mu.grad.numpy().copy()
        tape.zero()
        return float(out.numpy()[0]), g

    def step(self, lr=5e-3):
        value, g = self.gradient()
        self.k += 1
        self.mom1 = 0.9 * self.mom1 + 0.1 * g
        self.mom2 = 0.999 * self.mom2 + 0.001 * g * g
        upd = (self.mom1 / (1 - 0.9 ** self.k)) / (np.sqrt(self.mom2 / (1 - 0.999 ** self.k)) + 1e-12)
        self.mu.assign(np.maximum(self.mu.numpy() - lr * upd, 0.0))
        return value

    def run(self, iterations, verbose=False):
        out = []
        for it in range(iterations):
            out.append(self.step())
            if verbose and it % 50 == 0:
                print(f"{it:5d} misfit {out[-1]:.4e} mu {np.round(self.mu.numpy(), 4)}")
        return out


def main():
    ap = argparse.ArgumentParser(description="layer attenuation coefficients from a fan of x-ray transmissions")
    ap.add_argument("--rays", type=int, default=24)
    ap.add_argument("--iterations", type=int, default=500)
    args = ap.parse_args()
    wp.init()
    inv = Inversion(args.rays)
    inv.run(args.iterations, verbose=True)
    print("true mu     ", np.round(inv.scan.mu_true, 4))
    print("recovered mu", np.round(inv.mu.numpy(), 4))


if __name__ == "__main__":
    main()
