import argparse

import numpy as np
import warp as wp

from model import FurnaceRod


def gradient_step(model):
    loss = model.evaluate(requires_grad=True)
    model.tape.backward(model.rod.loss)
    grad = model.log_kappa.grad.numpy().copy()
    model.tape.zero()
    return loss, grad


class Adam:
    def __init__(self, n, lr):
        self.lr = lr
        self.m = np.zeros(n)
        self.v = np.zeros(n)
        self.k = 0

    def update(self, x, g):
        self.k += 1
        self.m = 0.9 * self.m + 0.1 * g
        self.v = 0.999 * self.v + 0.001 * g * g
        mhat = self.m / (1.0 - 0.9**self.k)
        vhat = self.v / (1.0 - 0.999**self.k)
        return x - self.lr * mhat / (np.sqrt(vhat) + 1e-10)


def optimise(model, iters, lr=0.02, report=None):
    opt = Adam(model.log_kappa.shape[0], lr)
    losses = []
    for it in range(iters):
        loss, grad = gradient_step(model)
        losses.append(loss)
        model.log_kappa.assign(opt.update(model.log_kappa.numpy(), grad))
        if report is not None and it % report == 0:
            print(f"[{it:04d}] misfit={loss:.4e} kappa={np.array2string(model.profile(), precision=2)}")
    return losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cells", type=int, default=32)
    p.add_argument("--steps", type=int, default=120)
    p.add_argument("--iters", type=int, default=500)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--csv", default=None)
    a = p.parse_args()
    wp.init()
    model = FurnaceRod(a.cells, a.steps)
    losses = optimise(model, a.iters, a.lr, report=25)
    if a.csv:
        np.savetxt(a.csv, np.column_stack([np.arange(len(losses)), losses]), delimiter=",")


if __name__ == "__main__":
    main()
