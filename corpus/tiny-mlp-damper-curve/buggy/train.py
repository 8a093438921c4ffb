import argparse

import numpy as np
import warp as wp
import warp.optim

from model import DamperNet, mse


def damper_data(samples, seed):
    rng = np.random.default_rng(seed)
    v = np.sort(rng.uniform(-1.0, 1.0, samples))
    force = np.where(v > 0.0, 1.8 * v, 0.7 * v) + 0.3 * np.tanh(6.0 * v) + rng.normal(0.0, 0.02, samples)
    return v.astype(np.float32), force.astype(np.float32)


def train_step(net, opt, x, target):
    tape = wp.Tape()
    with tape:
        loss = mse(net(x), target)
    tape.backward(loss)
    opt.step([p.grad for p in net.parameters()])
    return loss.numpy()[0]


def main():
    ap = argparse.ArgumentParser(description="fit a small MLP to a shock-absorber force-velocity curve")
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    v, f = damper_data(args.samples, args.seed)
    x = wp.array(v, dtype=float)
    target = wp.array(f, dtype=float)
    net = DamperNet(args.seed)
    opt = warp.optim.Adam(net.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        loss = train_step(net, opt, x, target)
        if epoch % 20 == 0:
            print(f"epoch {epoch:4d}  mse {loss:.5f}")


if __name__ == "__main__":
    main()
