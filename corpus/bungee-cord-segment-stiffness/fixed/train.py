import argparse

import numpy as np
import warp as wp

from cord import Cord


@wp.kernel
def marker_loss(x: wp.array(dtype=wp.vec2d), markers: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - markers[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Trainer:
    def __init__(self, args):
        self.cord = Cord(args.segments, args.substeps, args.dt, args.seed)
        truth = wp.array(self.cord.true_stiffness, dtype=wp.float64)
        self.markers = wp.clone(self.cord.simulate(truth))
        self.lr = args.lr

    def loss(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        x = self.cord.simulate(self.cord.stiffness)
        wp.launch(marker_loss, dim=self.cord.n, inputs=[x, self.markers], outputs=[loss])
        return loss

    def step(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        k = self.cord.stiffness
        k.assign(k.numpy() - self.lr * k.grad.numpy())
        tape.zero()
        return loss.numpy()[0]


def main():
    ap = argparse.ArgumentParser(description="identify bungee cord segment stiffness from marker positions")
    ap.add_argument("--segments", type=int, default=5)
    ap.add_argument("--substeps", type=int, default=30)
    ap.add_argument("--dt", type=float, default=0.01)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=2.0e4)
    ap.add_argument("--seed", type=int, default=2)
    args = ap.parse_args()
    trainer = Trainer(args)
    for it in range(args.iters):
        loss = trainer.step()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss:.4e}")
    print("stiffness", np.round(trainer.cord.stiffness.numpy(), 1))
    print("truth    ", np.round(trainer.cord.true_stiffness, 1))


if __name__ == "__main__":
    main()
