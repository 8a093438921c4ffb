import argparse

import numpy as np
import warp as wp

from fleet import Fleet


class GainTuner:
    def __init__(self, fleet, kp0=1.0, kd0=0.5, lr=0.05):
        self.fleet = fleet
        dev = fleet.device
        self.kp = wp.full(fleet.n, kp0, dtype=float, device=dev, requires_grad=True)
        self.kd = wp.full(fleet.n, kd0, dtype=float, device=dev, requires_grad=True)
        self.lr = lr
        self.ones = wp.ones(fleet.n, dtype=float, device=dev)
        self.log = []

    def total_cost(self):
        return float(np.sum(self.fleet.rollout(self.kp, self.kd).numpy()))

    def gains_gradient(self):
        tape = wp.Tape()
        with tape:
            cost = self.fleet.rollout(self.kp, self.kd)
        total = float(np.sum(cost.numpy()))
        tape.backward(grads={cost: self.ones})
        g = (self.kp.grad.numpy().copy(), self.kd.grad.numpy().copy())
        tape.zero()
        return total, g

    def step(self):
        total, (gp, gd) = self.gains_gradient()
        self.kp.assign(np.clip(self.kp.numpy() - self.lr * gp, 0.0, 50.0))
        self.kd.assign(np.clip(self.kd.numpy() - self.lr * gd, 0.0, 50.0))
        self.log.append(total)
        return total

    def run(self, iters):
        return [self.step() for _ in range(iters)]


def main():
    ap = argparse.ArgumentParser(description="tune per-rover PD gains")
    ap.add_argument("--rovers", type=int, default=32)
    ap.add_argument("--horizon", type=int, default=80)
    ap.add_argument("--iters", type=int, default=150)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args()
    wp.init()
    tuner = GainTuner(Fleet(args.rovers, args.horizon), lr=args.lr)
    for it in range(args.iters):
        c = tuner.step()
        if it % 10 == 0:
            print(f"iter {it:3d} cost {c:.4f} kp~{tuner.kp.numpy().mean():.3f} kd~{tuner.kd.numpy().mean():.3f}")


if __name__ == "__main__":
    main()
