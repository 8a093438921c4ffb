import argparse
import time

import numpy as np
import warp as wp

from imaging import Deblur, synthetic_slide


class Adam:
    def __init__(self, shape, lr=0.01, betas=(0.9, 0.999), eps=1e-8):
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m = np.zeros(shape)
        self.v = np.zeros(shape)
        self.t = 0

    def __call__(self, x, g):
        b1, b2 = self.betas
        self.t += 1
        self.m *= b1
        self.m += (1 - b1) * g
        self.v *= b2
        self.v += (1 - b2) * g * g
        return x - self.lr * (self.m / (1 - b1**self.t)) / (np.sqrt(self.v / (1 - b2**self.t)) + self.eps)


def iteration(model, img):
    tape = wp.Tape()
    with tape:
        loss = model.forward(img)
    tape.backward(loss)
    g = img.grad.numpy().copy()
    img.grad.zero_()
    tape.zero()
    return float(loss.numpy()[0]), g


def deconvolve(model, img, iters, lr=0.01, every=0):
    opt = Adam(img.shape, lr=lr)
    losses = []
    t0 = time.time()
    for k in range(iters):
        value, g = iteration(model, img)
        img.assign(opt(img.numpy(), g))
        losses.append(value)
        if every and k % every == 0:
            print(f"{k:5d}  loss {value:.6e}  {time.time() - t0:.1f}s")
    return losses


def main():
    ap = argparse.ArgumentParser(description="deblur a slide scan with a known PSF")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--iters", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--smooth", type=float, default=0.02)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    wp.init()
    truth, obs = synthetic_slide(args.size, args.size)
    model = Deblur(obs, smooth=args.smooth)
    img = wp.array(obs, dtype=wp.float64, requires_grad=True)
    deconvolve(model, img, args.iters, args.lr, every=20)
    est = img.numpy()
    print("rmse vs truth", float(np.sqrt(np.mean((np.clip(est, 0, 1) - truth) ** 2))))
    if args.out:
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 3, figsize=(12, 4))
        for a, im, title in zip(ax, (obs, est, truth), ("scan", "estimate", "truth")):
            a.imshow(im, cmap="gray", vmin=0, vmax=1)
            a.set_title(title)
        fig.savefig(args.out)


if __name__ == "__main__":
    main()
