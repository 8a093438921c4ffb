import argparse

import numpy as np
import warp as wp

from scene import Harbour


class BuoyFit:
    def __init__(self, harbour, mass0=2.0, drag0=1.0):
        n = harbour.n
        self.harbour = harbour
        self.mass = wp.full(n, mass0, dtype=float, device=harbour.device, requires_grad=True)
        self.drag = wp.full(n, drag0, dtype=float, device=harbour.device, requires_grad=True)
        self.iteration = 0

    def loss_value(self):
        return float(self.harbour.simulate(self.mass, self.drag).numpy()[0])

    def gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.harbour.simulate(self.mass, self.drag)
        tape.backward(loss)
        out = (float(loss.numpy()[0]), self.mass.grad.numpy().copy(), self.drag.grad.numpy().copy())
        tape.zero()
        return out

    def step(self, lr_mass, lr_drag):
        loss, gm, gd = self.gradients()
        self.mass.assign(np.maximum(self.mass.numpy() - lr_mass * gm, 0.2))
        self.drag.assign(np.maximum(self.drag.numpy() - lr_drag * gd, 0.0))
        self.iteration += 1
        return loss


def run(fit, iters, lr_mass=0.5, lr_drag=0.5, verbose=False):
    hist = []
    for _ in range(iters):
        hist.append(fit.step(lr_mass, lr_drag))
        if verbose:
            print(fit.iteration, hist[-1])
    return hist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--buoys", type=int, default=20)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.5)
    args = ap.parse_args()
    wp.init()
    fit = BuoyFit(Harbour(args.buoys, args.steps))
    run(fit, args.iters, args.lr, args.lr, verbose=True)
    np.savetxt("ballast.txt", np.column_stack([fit.mass.numpy(), fit.drag.numpy()]))


if __name__ == "__main__":
    main()
