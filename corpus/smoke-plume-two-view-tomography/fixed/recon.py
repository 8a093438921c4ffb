import argparse

import numpy as np
import warp as wp

from renderer import TwoViewRenderer


@wp.kernel
def adam_update(
    x: wp.array2d(dtype=float),
    g: wp.array2d(dtype=float),
    m: wp.array2d(dtype=float),
    v: wp.array2d(dtype=float),
    lr: float,
    b1: float,
    b2: float,
    c1: float,
    c2: float,
):
    i, j = wp.tid()
    m[i, j] = b1 * m[i, j] + (1.0 - b1) * g[i, j]
    v[i, j] = b2 * v[i, j] + (1.0 - b2) * g[i, j] * g[i, j]
    x[i, j] = x[i, j] - lr * (m[i, j] / c1) / (wp.sqrt(v[i, j] / c2) + 1.0e-8)


class WarpAdam:
    def __init__(self, param, lr=0.05, b1=0.9, b2=0.999):
        self.param = param
        self.m = wp.zeros_like(param, requires_grad=False)
        self.v = wp.zeros_like(param, requires_grad=False)
        self.lr, self.b1, self.b2, self.t = lr, b1, b2, 0

    def step(self, grad):
        self.t += 1
        wp.launch(
            adam_update,
            dim=self.param.shape,
            inputs=[self.param, grad, self.m, self.v, self.lr, self.b1, self.b2, 1.0 - self.b1**self.t, 1.0 - self.b2**self.t],
            device=self.param.device,
        )


def density_gradient(renderer, raw):
    tape = wp.Tape()
    with tape:
        loss = renderer.render_loss(raw)
    tape.backward(loss)
    g = wp.clone(raw.grad)
    value = float(loss.numpy()[0])
    tape.zero()
    return value, g


def reconstruct(renderer, raw, iters, lr=0.05, every=0):
    opt = WarpAdam(raw, lr=lr)
    trace = []
    for it in range(iters):
        value, g = density_gradient(renderer, raw)
        opt.step(g)
        trace.append(value)
        if every and it % every == 0:
            print(f"it {it:4d}  loss {value:.6f}")
    return trace


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--res", type=int, default=48)
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    wp.init()
    r = TwoViewRenderer(args.res)
    raw = wp.full((args.res, args.res), -1.0, dtype=float, requires_grad=True)
    reconstruct(r, raw, args.iters, args.lr, every=20)
    if args.save:
        np.save(args.save, r.sigma.numpy())


if __name__ == "__main__":
    main()
