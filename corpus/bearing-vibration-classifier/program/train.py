import argparse

import numpy as np
import warp as wp

from features import make_dataset
from model import logistic_loss, weight_decay


class FaultClassifier:
    def __init__(self, args, device):
        x, y = make_dataset(args.samples, 8, args.seed)
        self.device = device
        self.n = args.samples
        self.x = wp.array(x, dtype=wp.float64, device=device)
        self.y = wp.array(y, dtype=wp.float64, device=device)
        self.w = wp.array(0.1 * np.random.randn(8), dtype=wp.float64, requires_grad=True, device=device)
        self.b = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)
        self.lam = args.weight_decay
        self.lr = args.lr
        self.params = {"w": self.w, "b": self.b}

    def forward(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(logistic_loss, dim=self.n, inputs=[self.x, self.y, self.w, self.b, wp.float64(1.0 / self.n)],
                  outputs=[loss], device=self.device)
        wp.launch(weight_decay, dim=8, inputs=[self.w, wp.float64(self.lam)], outputs=[loss], device=self.device)
        return loss

    def loss(self):
        return float(self.forward().numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        for k, v in self.params.items():
            v.assign(v.numpy() - self.lr * g[k])
        return self.loss()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="logistic fault classifier on bearing vibration features")
    p.add_argument("--samples", type=int, default=400)
    p.add_argument("--weight-decay", type=float, default=1e-3)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    clf = FaultClassifier(args, args.device or wp.get_preferred_device())
    for epoch in range(args.epochs):
        loss = clf.step()
        if epoch % 20 == 0:
            print(f"epoch {epoch:4d}  loss {loss:.5f}")


if __name__ == "__main__":
    main()
