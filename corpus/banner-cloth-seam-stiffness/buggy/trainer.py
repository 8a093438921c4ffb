import argparse

import numpy as np
import warp as wp

from cloth import Banner


class Trainer:
    def __init__(self, banner, lr=0.5, settle_frames=10):
        self.banner = banner
        self.log_k = wp.full(banner.m, float(np.log(100.0)), dtype=wp.float64, device=banner.device, requires_grad=True)
        self.lr = lr
        self.settle_frames = settle_frames
        self.frames = []
        self.iteration = 0

    def compute_gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.banner.simulate(self.log_k)
        value = float(loss.numpy()[0])
        self.frames.append(self.banner.settle(self.log_k, self.settle_frames))
        tape.backward(loss)
        grad = self.log_k.grad.numpy().copy()
        tape.zero()
        return value, grad

    def step(self):
        value, grad = self.compute_gradient()
        self.log_k.assign(self.log_k.numpy() - self.lr * grad)
        self.iteration += 1
        return value

    def fit(self, iters, log=False):
        out = []
        for _ in range(iters):
            out.append(self.step())
            if log:
                print(f"iter {self.iteration:3d} pose error {out[-1]:.6e}")
        return out


def main():
    ap = argparse.ArgumentParser(description="fit banner seam stiffness to a scanned drape")
    ap.add_argument("--nx", type=int, default=8)
    ap.add_argument("--ny", type=int, default=6)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--movie", default=None)
    args = ap.parse_args()
    wp.init()
    tr = Trainer(Banner(args.nx, args.ny, args.steps), lr=args.lr)
    tr.fit(args.iters, log=True)
    if args.movie:
        np.save(args.movie, np.stack(tr.frames))


if __name__ == "__main__":
    main()
