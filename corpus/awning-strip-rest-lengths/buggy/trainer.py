import argparse

import numpy as np
import warp as wp
import warp.optim

from strip import Strip, scan_error


class Trainer:
    def __init__(self, strip, scan, lr):
        self.strip = strip
        self.scan = wp.array(scan, dtype=wp.vec2)
        self.rest = wp.array(np.full(strip.nodes - 1, 0.2), dtype=wp.float32, requires_grad=True)
        self.opt = warp.optim.SGD([self.rest], lr=lr, momentum=0.5)
        self.err = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        self.tape = wp.Tape()

    def loss(self):
        x = self.strip.drape(self.rest)
        self.err.zero_()
        wp.launch(scan_error, dim=self.strip.nodes, inputs=[x, self.scan], outputs=[self.err])
        return self.err

    def step(self):
        with self.tape:
            err = self.loss()
        self.tape.backward(err)
        self.opt.step([self.rest.grad])
        self.tape.zero()
        return err.numpy()[0]


def main():
    parser = argparse.ArgumentParser(description="fit awning strip segment rest lengths to a laser scan of its sag")
    parser.add_argument("--nodes", type=int, default=7)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    strip = Strip(args.nodes, args.steps)
    truth = wp.array(np.linspace(0.19, 0.24, args.nodes - 1), dtype=wp.float32)
    scan = strip.drape(truth).numpy()
    trainer = Trainer(strip, scan, args.lr)
    for epoch in range(args.epochs):
        e = trainer.step()
        if epoch % 10 == 0:
            print(f"epoch {epoch}: scan error {e:.6e}")
    print("rest lengths", trainer.rest.numpy())


if __name__ == "__main__":
    main()
