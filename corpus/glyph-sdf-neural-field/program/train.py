import argparse

import numpy as np
import warp as wp

from field import NeuralField


class Adam:
    def __init__(self, params, lr=3e-3, b1=0.9, b2=0.999, eps=1e-8):
        self.params = params
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.m = {k: np.zeros(p.shape, dtype=np.float32) for k, p in params.items()}
        self.v = {k: np.zeros(p.shape, dtype=np.float32) for k, p in params.items()}
        self.t = 0

    def step(self, grads):
        self.t += 1
        for k, p in self.params.items():
            g = grads[k]
            self.m[k] = self.b1 * self.m[k] + (1 - self.b1) * g
            self.v[k] = self.b2 * self.v[k] + (1 - self.b2) * g * g
            mh = self.m[k] / (1 - self.b1**self.t)
            vh = self.v[k] / (1 - self.b2**self.t)
            p.assign((p.numpy() - self.lr * mh / (np.sqrt(vh) + self.eps)).astype(np.float32))


def compute_grads(model):
    params = model.net.named_parameters()
    tape = wp.Tape()
    with tape:
        loss = model.forward()
    tape.backward(loss)
    grads = {k: p.grad.numpy().copy() for k, p in params.items()}
    tape.zero()
    return float(loss.numpy()[0]), grads


def train(model, opt, iters, log_every=0):
    history = []
    for it in range(iters):
        loss, grads = compute_grads(model)
        opt.step(grads)
        history.append(loss)
        if log_every and it % log_every == 0:
            gn = np.sqrt(sum(float(np.sum(g * g)) for g in grads.values()))
            print(f"it {it:5d} loss {loss:.5f} |g| {gn:.3e}")
    return history


def main():
    ap = argparse.ArgumentParser(description="fit a neural SDF to a glyph")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--points", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--plot", action="store_true")
    args = ap.parse_args()
    wp.init()
    model = NeuralField(args.hidden, args.depth, args.points)
    opt = Adam(model.net.named_parameters(), lr=args.lr)
    train(model, opt, args.iters, log_every=100)
    if args.plot:
        import matplotlib.pyplot as plt

        g = np.stack(np.meshgrid(np.linspace(-1, 1, 128), np.linspace(-1, 1, 128)), -1).reshape(-1, 2).astype(np.float32)
        pred = model.net(wp.array(g, dtype=float)).numpy().reshape(128, 128)
        plt.contourf(pred, levels=20)
        plt.contour(pred, levels=[0.0], colors="k")
        plt.show()


if __name__ == "__main__":
    main()
