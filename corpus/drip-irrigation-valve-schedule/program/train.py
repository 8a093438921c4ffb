import argparse

import numpy as np
import warp as wp

from network import DripNetwork


class ScheduleOptimizer:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.data_seed)
        self.net = DripNetwork(args.zones, args.valves, rng, device)
        last_season = rng.uniform(0.1, 0.9, size=args.valves)
        last_season[rng.uniform(size=args.valves) < 0.35] = 0.0
        self.opening = wp.array(last_season, dtype=wp.float64, requires_grad=True, device=device)
        self.pump_cost = args.pump_cost
        self.lr = args.lr
        self.params = {"opening": self.opening}

    def loss(self):
        return float(self.net.cost(self.opening, self.pump_cost).numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.net.cost(self.opening, self.pump_cost)
        tape.backward(loss)
        g = {"opening": self.opening.grad.numpy().copy()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        u = np.clip(self.opening.numpy() - self.lr * g["opening"], 0.0, 1.0)
        self.opening.assign(u)
        return self.loss()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="valve opening schedule for a drip irrigation network")
    p.add_argument("--zones", type=int, default=10)
    p.add_argument("--valves", type=int, default=12)
    p.add_argument("--pump-cost", type=float, default=0.02)
    p.add_argument("--lr", type=float, default=0.2)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--data-seed", type=int, default=5)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    opt = ScheduleOptimizer(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        loss = opt.step()
        if it % 20 == 0:
            print(f"iter {it:4d}  cost {loss:.6f}  closed {int(np.sum(opt.opening.numpy() == 0.0))}")
    print("openings", np.round(opt.opening.numpy(), 3))


if __name__ == "__main__":
    main()
