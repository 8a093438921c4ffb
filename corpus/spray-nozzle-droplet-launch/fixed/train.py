import argparse

import numpy as np
import warp as wp

from sim import Spray


class Adam:
    def __init__(self, shape, lr=0.05, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = np.zeros(shape)
        self.s = np.zeros(shape)
        self.t = 0

    def step(self, x, g):
        self.t += 1
        self.m = self.b1 * self.m + (1 - self.b1) * g
        self.s = self.b2 * self.s + (1 - self.b2) * g * g
        mh = self.m / (1 - self.b1**self.t)
        sh = self.s / (1 - self.b2**self.t)
        return x - self.lr * mh / (np.sqrt(sh) + self.eps)


def loss_and_grad(spray, v_launch):
    tape = wp.Tape()
    with tape:
        loss = spray.run(v_launch)
    tape.backward(loss)
    g = v_launch.grad.numpy().copy()
    tape.zero()
    return float(loss.numpy()[0]), g


def fit(spray, v_launch, iters, lr=0.05, log_every=0):
    opt = Adam(v_launch.shape + (3,), lr=lr)
    history = []
    for it in range(iters):
        loss, g = loss_and_grad(spray, v_launch)
        history.append(loss)
        v_launch.assign(opt.step(v_launch.numpy(), g))
        if log_every and it % log_every == 0:
            print(f"iter {it:4d} loss {loss:.6f} |g| {np.linalg.norm(g):.3e}")
    return history


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--drops", type=int, default=64)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--device", default=None)
    parser.add_argument("--plot", action="store_true")
    args = parser.parse_args()
    wp.init()
    spray = Spray(args.drops, args.steps, device=args.device)
    v_launch = wp.zeros(args.drops, dtype=wp.vec3d, device=args.device, requires_grad=True)
    history = fit(spray, v_launch, args.iters, lr=args.lr, log_every=10)
    if args.plot:
        import matplotlib.pyplot as plt

        pts = spray.final_positions()
        goal = spray.target.numpy()
        fig, ax = plt.subplots(1, 2, figsize=(9, 4))
        ax[0].semilogy(history)
        ax[1].scatter(goal[:, 0], goal[:, 2], marker="x")
        ax[1].scatter(pts[:, 0], pts[:, 2], s=8)
        plt.show()


if __name__ == "__main__":
    main()
