"""Fit a one-hidden-layer tanh network to a 1-D curve with a small trainer class."""
import numpy as np
import warp as wp
import warp.optim

from model import TinyMLP, mse


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.params = model.parameters()
        self.opt = warp.optim.SGD(self.params, lr=lr)
        self.tape = wp.Tape()

    def step(self, x, t):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        with self.tape:
            y = self.model(x)
            wp.launch(mse, dim=x.shape[0], inputs=[y, t], outputs=[loss])
        self.tape.backward(loss)
        self.opt.step([p.grad for p in self.params])
        for p in self.params:
            p.grad.zero_()
        return float(loss.numpy()[0])


def dataset(n=24):
    x = np.linspace(-2.0, 2.0, n)
    return x, np.sin(1.5 * x) * np.exp(-0.2 * x * x)


def main(iters=20):
    x_np, t_np = dataset()
    x = wp.array(x_np, dtype=float)
    t = wp.array(t_np, dtype=float)
    trainer = Trainer(TinyMLP(seed=1), lr=0.1)
    for it in range(iters):
        l = trainer.step(x, t)
        if it % 4 == 0:
            print(f"iter {it:3d} mse {l:.6f}")


if __name__ == "__main__":
    main()
