import argparse

import numpy as np
import torch
import warp as wp

from model import ThrustPolicy
from sim import DockingLoss, Harbour


def harbour_layout(n, seed):
    rng = np.random.default_rng(seed)
    start = rng.uniform(-1.0, 1.0, (n, 2))
    dock = np.stack([np.linspace(-0.8, 0.8, n), np.full(n, 1.2)], axis=1) + 0.05 * rng.standard_normal((n, 2))
    return start, dock


class DockingTrainer:
    def __init__(self, n_boats=32, steps=30, lr=1e-2, seed=0, device="cpu"):
        torch.manual_seed(seed)
        start, dock = harbour_layout(n_boats, seed)
        self.harbour = Harbour(start, dock, steps=steps, device=device)
        self.features = torch.tensor(np.concatenate([start, dock], axis=1), dtype=torch.float64)
        self.policy = ThrustPolicy().double()
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=lr)

    def loss(self):
        thrust = self.policy(self.features)
        effort = 1.0e-3 * (thrust * thrust).sum(dim=1).mean()
        return DockingLoss.apply(thrust, self.harbour)[0] + effort

    def backward_pass(self):
        self.opt.zero_grad()
        value = self.loss()
        value.backward()
        return float(value.detach())

    def fit(self, iterations, log_every=0):
        history = []
        for it in range(iterations):
            value = self.backward_pass()
            self.opt.step()
            history.append(value)
            if log_every and it % log_every == 0:
                print(f"iter {it:4d} loss {value:.5f}")
        return history


def main():
    ap = argparse.ArgumentParser(description="train a thrust policy that docks harbour drones")
    ap.add_argument("--boats", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--iterations", type=int, default=500)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    wp.init()
    trainer = DockingTrainer(args.boats, args.steps, args.lr)
    trainer.fit(args.iterations, log_every=25)
    if args.save:
        torch.save(trainer.policy.state_dict(), args.save)


if __name__ == "__main__":
    main()
