import argparse

import numpy as np
import warp as wp


@wp.func
def burst_height(speed: wp.float64, angle: wp.float64, fuse: wp.float64):
    g = wp.float64(9.81)
    k = wp.float64(0.02)
    vz = speed * wp.sin(angle)
    drag = wp.float64(1.0) / (wp.float64(1.0) + k * speed * fuse)
    return (vz * fuse - wp.float64(0.5) * g * fuse * fuse) * drag


@wp.kernel
def height_error(
    speed: wp.array(dtype=wp.float64),
    angle: wp.array(dtype=wp.float64),
    fuse: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    count: int,
    stride: int,
    loss: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    d = burst_height(speed[j], angle[j], fuse[j]) - target[j]
    wp.atomic_add(loss, 0, d * d)


class Show:
    def __init__(self, capacity, shells, seed):
        rng = np.random.default_rng(seed)
        self.count = shells
        self.angle = wp.array(rng.uniform(1.2, 1.5, capacity), dtype=wp.float64)
        self.fuse = wp.array(rng.uniform(2.5, 4.0, capacity), dtype=wp.float64)
        self.target = wp.array(rng.uniform(80.0, 140.0, capacity), dtype=wp.float64)
        self.speed = wp.array(np.full(capacity, 60.0), dtype=wp.float64, requires_grad=True)

    def loss(self, threads):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(height_error, dim=self.count, inputs=[self.speed, self.angle, self.fuse, self.target, self.count, threads], outputs=[loss])
        return loss


def main():
    ap = argparse.ArgumentParser(description="launch speeds so each shell bursts at its programmed height")
    ap.add_argument("--capacity", type=int, default=16)
    ap.add_argument("--shells", type=int, default=8)
    ap.add_argument("--threads", type=int, default=12)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=4)
    args = ap.parse_args()
    show = Show(args.capacity, args.shells, args.seed)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = show.loss(args.threads)
        tape.backward(loss)
        show.speed.assign(show.speed.numpy() - args.lr * show.speed.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.4f}")
    print("speeds", np.round(show.speed.numpy(), 2))


if __name__ == "__main__":
    main()
