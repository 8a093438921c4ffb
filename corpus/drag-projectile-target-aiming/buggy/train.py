"""Aim a volley of projectiles (gravity + quadratic air drag) at ground targets by optimizing launch velocities."""
import argparse

import numpy as np
import warp as wp
import warp.optim

wp.config.quiet = True

GRAVITY = wp.constant(wp.vec3(0.0, -9.81, 0.0))


@wp.kernel
def ballistic_step(
    pos: wp.array(dtype=wp.vec3),
    vel: wp.array(dtype=wp.vec3),
    drag: float,
    dt: float,
    pos_next: wp.array(dtype=wp.vec3),
    vel_next: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    v = vel[i]
    speed = wp.length(v)
    a = GRAVITY - drag * speed * v
    v1 = v + a * dt
    vel_next[i] = v1
    pos_next[i] = pos[i] + v1 * dt


@wp.kernel
def miss_distance(pos: wp.array(dtype=wp.vec3), targets: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = pos[i] - targets[i]
    wp.atomic_add(loss, 0, wp.dot(d, d) / float(pos.shape[0]))


def make_volley(n, seed=21):
    rng = np.random.default_rng(seed)
    start = np.zeros((n, 3))
    start[:, 0] = rng.uniform(-1.0, 1.0, n)
    targets = np.stack([rng.uniform(4.0, 8.0, n), rng.uniform(-0.5, 0.5, n), rng.uniform(-2.0, 2.0, n)], axis=1)
    v0 = np.tile(np.array([6.0, 5.0, 0.0]), (n, 1))
    return start, targets, v0


class Volley:
    def __init__(self, n, steps, dt, drag):
        self.n, self.steps, self.dt, self.drag = n, steps, dt, drag
        start, targets, v0 = make_volley(n)
        self.start = wp.array(start, dtype=wp.vec3)
        self.targets = wp.array(targets, dtype=wp.vec3)
        self.pos = [self.start] + [wp.zeros(n, dtype=wp.vec3, requires_grad=True) for _ in range(steps)]
        self.vel = [wp.zeros(n, dtype=wp.vec3, requires_grad=True) for _ in range(steps)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def run(self, v0):
        self.loss.zero_()
        vel = v0
        for s in range(self.steps):
            wp.launch(
                ballistic_step,
                dim=self.n,
                inputs=[self.pos[s], vel, self.drag, self.dt],
                outputs=[self.pos[s + 1], self.vel[s]],
            )
            vel = self.vel[s]
        wp.launch(miss_distance, dim=self.n, inputs=[self.pos[self.steps], self.targets], outputs=[self.loss])
        return self.loss


class Trainer:
    def __init__(self, volley, lr):
        self.volley = volley
        _, _, v0 = make_volley(volley.n)
        self.v0 = wp.array(v0, dtype=wp.vec3, requires_grad=True)
        self.opt = warp.optim.Adam([self.v0], lr=lr)

    def step(self):
        tape = wp.Tape()
        with tape:
            loss = self.volley.run(self.v0)
        tape.backward(loss)
        tape.zero()
        self.opt.step([self.v0.grad])
        return float(loss.numpy()[0])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--num", type=int, default=6)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--dt", type=float, default=0.03)
    parser.add_argument("--drag", type=float, default=0.05)
    parser.add_argument("--iters", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.2)
    args = parser.parse_args(argv)

    trainer = Trainer(Volley(args.num, args.steps, args.dt, args.drag), args.lr)
    for it in range(args.iters):
        value = trainer.step()
        if it % 10 == 0:
            print(f"iter {it:3d} mean sq miss {value:.4f}")


if __name__ == "__main__":
    main()
