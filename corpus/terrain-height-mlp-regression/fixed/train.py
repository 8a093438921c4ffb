import argparse

import numpy as np
import warp as wp

import data
import losses
from model import TwoLayerNet


class Trainer:
    def __init__(self, n_points=256, hidden=32, lr=1e-2, device=None):
        xy, h = data.survey_points(n_points)
        self.x = wp.array(xy, dtype=float, device=device)
        self.target = wp.array(h, dtype=float, device=device)
        self.net = TwoLayerNet(2, hidden, 1, n_points, device=device)
        self.lr = lr
        self.state = {k: (np.zeros(p.shape, np.float32), np.zeros(p.shape, np.float32))
                      for k, p in self.net.parameters().items()}
        self.step_count = 0

    def evaluate(self):
        return float(losses.mse(self.net(self.x), self.target).numpy()[0])

    def backprop(self):
        tape = wp.Tape()
        with tape:
            loss = losses.mse(self.net(self.x), self.target)
        tape.backward(loss)
        grads = {k: p.grad.numpy().copy() for k, p in self.net.parameters().items()}
        tape.zero()
        return float(loss.numpy()[0]), grads

    def adam_step(self, grads, b1=0.9, b2=0.999, eps=1e-8):
        self.step_count += 1
        for k, p in self.net.parameters().items():
            m, v = self.state[k]
            g = grads[k]
            m[:] = b1 * m + (1 - b1) * g
            v[:] = b2 * v + (1 - b2) * g * g
            mh = m / (1 - b1 ** self.step_count)
            vh = v / (1 - b2 ** self.step_count)
            p.assign(p.numpy() - self.lr * mh / (np.sqrt(vh) + eps))

    def epochs(self, n, log_every=0):
        out = []
        for e in range(n):
            loss, grads = self.backprop()
            self.adam_step(grads)
            out.append(loss)
            if log_every and e % log_every == 0:
                print(f"epoch {e:5d}  mse {loss:.5f}")
        return out


def main():
    ap = argparse.ArgumentParser(description="fit a terrain height field to survey points")
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--device", default=None)
    args = ap.parse_args()
    wp.init()
    tr = Trainer(args.points, args.hidden, args.lr, args.device)
    tr.epochs(args.epochs, log_every=100)
    print("final mse", tr.evaluate())


if __name__ == "__main__":
    main()
