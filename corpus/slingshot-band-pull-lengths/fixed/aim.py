import argparse

import numpy as np
import warp as wp


@wp.kernel
def release(pull: wp.array(dtype=wp.float64), k: wp.float64, mass: wp.float64, pos: wp.array(dtype=wp.vec2d), vel: wp.array(dtype=wp.vec2d), angle: wp.array(dtype=wp.float64)):
    i = wp.tid()
    speed = pull[i] * wp.sqrt(k / mass)
    vel[i] = wp.vec2d(speed * wp.cos(angle[i]), speed * wp.sin(angle[i]))
    pos[i] = wp.vec2d(wp.float64(0.0), wp.float64(1.0))


@wp.kernel
def fly(pos: wp.array(dtype=wp.vec2d), vel: wp.array(dtype=wp.vec2d), dt: wp.float64, drag: wp.float64, pos_out: wp.array(dtype=wp.vec2d), vel_out: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    v = vel[i]
    a = wp.vec2d(wp.float64(0.0), wp.float64(-9.81)) - drag * wp.length(v) * v
    vn = v + dt * a
    vel_out[i] = vn
    pos_out[i] = pos[i] + dt * vn


@wp.kernel
def miss(pos: wp.array(dtype=wp.vec2d), targets: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = pos[i] - targets[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Range:
    def __init__(self, shots, steps, seed):
        rng = np.random.default_rng(seed)
        self.n = shots
        self.steps = steps
        self.angle = wp.array(rng.uniform(0.3, 0.6, shots), dtype=wp.float64)
        self.targets = wp.array(np.stack([rng.uniform(4.0, 7.0, shots), rng.uniform(0.5, 2.0, shots)], 1), dtype=wp.vec2d)
        self.pull = wp.array(np.full(shots, 0.25), dtype=wp.float64, requires_grad=True)
        self.pos = [wp.zeros(shots, dtype=wp.vec2d, requires_grad=True) for _ in range(steps + 1)]
        self.vel = [wp.zeros(shots, dtype=wp.vec2d, requires_grad=True) for _ in range(steps + 1)]
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)

    def reset(self):
        for a in self.pos + self.vel:
            a.zero_()
        self.loss.zero_()

    def shoot(self, dt=0.02):
        wp.launch(release, dim=self.n, inputs=[self.pull, wp.float64(400.0), wp.float64(0.05), self.pos[0], self.vel[0], self.angle])
        for s in range(self.steps):
            wp.launch(fly, dim=self.n, inputs=[self.pos[s], self.vel[s], wp.float64(dt), wp.float64(0.02)], outputs=[self.pos[s + 1], self.vel[s + 1]])
        wp.launch(miss, dim=self.n, inputs=[self.pos[-1], self.targets], outputs=[self.loss])
        return self.loss


def main():
    ap = argparse.ArgumentParser(description="band pull lengths that hit each target after a set flight time")
    ap.add_argument("--shots", type=int, default=5)
    ap.add_argument("--steps", type=int, default=25)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=52)
    args = ap.parse_args()
    rng_range = Range(args.shots, args.steps, args.seed)
    for it in range(args.iters):
        rng_range.reset()
        tape = wp.Tape()
        with tape:
            loss = rng_range.shoot()
        tape.backward(loss)
        g = rng_range.pull.grad.numpy().copy()
        rng_range.pull.assign(rng_range.pull.numpy() - args.lr * g)
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  miss {loss.numpy()[0]:.5f}")
    print("pull", np.round(rng_range.pull.numpy(), 4))


if __name__ == "__main__":
    main()
