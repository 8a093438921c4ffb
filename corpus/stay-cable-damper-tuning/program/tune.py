import argparse

import numpy as np
import warp as wp

from cable import StayCable


class DamperTuner:
    def __init__(self, args, device):
        self.cable = StayCable(args.nodes, args.steps, device)
        self.damper = wp.array(np.full(args.nodes, args.start), dtype=wp.float64, requires_grad=True, device=device)
        self.budget = args.budget
        self.lr = args.lr
        self.params = {"damper": self.damper}

    def energy_left(self):
        return float(self.cable.rollout(self.damper).numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.cable.rollout(self.damper)
        tape.backward(loss)
        g = {"damper": self.damper.grad.numpy().copy()}
        tape.reset()
        return g

    def step(self):
        g = self.compute_gradients()["damper"]
        c = np.clip(self.damper.numpy() - self.lr * g, 0.0, None)
        if c.sum() > self.budget:
            c *= self.budget / c.sum()
        self.damper.assign(c)
        return self.energy_left()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="distribute viscous damping along a bridge stay cable")
    p.add_argument("--nodes", type=int, default=12)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--start", type=float, default=0.5)
    p.add_argument("--budget", type=float, default=8.0)
    p.add_argument("--lr", type=float, default=20.0)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    tuner = DamperTuner(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        e = tuner.step()
        if it % 10 == 0:
            print(f"iter {it:3d}  energy left {e:.6e}")
    print("damping per node", np.round(tuner.damper.numpy(), 3))


if __name__ == "__main__":
    main()
