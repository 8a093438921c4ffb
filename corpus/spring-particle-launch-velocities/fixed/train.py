"""Damped spring particles: learn initial velocities so each particle ends at its target."""
import argparse

import numpy as np
import warp as wp
import warp.optim

wp.config.quiet = True


@wp.kernel
def compute_forces(
    x: wp.array(dtype=wp.vec2),
    v: wp.array(dtype=wp.vec2),
    stiffness: float,
    drag: float,
    f: wp.array(dtype=wp.vec2),
):
    i = wp.tid()
    vi = v[i]
    f[i] = -stiffness * x[i] - drag * wp.dot(vi, vi) * vi


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.vec2),
    v: wp.array(dtype=wp.vec2),
    f: wp.array(dtype=wp.vec2),
    dt: float,
    x_out: wp.array(dtype=wp.vec2),
    v_out: wp.array(dtype=wp.vec2),
):
    i = wp.tid()
    v_new = v[i] + f[i] * dt
    v_out[i] = v_new
    x_out[i] = x[i] + v_new * dt


@wp.kernel
def target_loss(x: wp.array(dtype=wp.vec2), target: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def make_data(n, seed=0):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1.0, 1.0, size=(n, 2))
    target = rng.uniform(-0.5, 0.5, size=(n, 2))
    v0 = rng.normal(0.0, 0.5, size=(n, 2))
    return x0, target, v0


class SpringSystem:
    def __init__(self, n, steps, dt=0.05, stiffness=4.0, drag=0.3, seed=0):
        self.n, self.steps, self.dt = n, steps, dt
        self.stiffness, self.drag = stiffness, drag
        x0, target, v0 = make_data(n, seed)
        self.x0 = wp.array(x0, dtype=wp.vec2)
        self.target = wp.array(target, dtype=wp.vec2)
        self.v0 = wp.array(v0, dtype=wp.vec2, requires_grad=True)
        self.xs = [wp.zeros(n, dtype=wp.vec2, requires_grad=True) for _ in range(steps)]
        self.vs = [wp.zeros(n, dtype=wp.vec2, requires_grad=True) for _ in range(steps)]
        self.fs = [wp.zeros(n, dtype=wp.vec2, requires_grad=True) for _ in range(steps)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def simulate(self):
        self.loss.zero_()
        x, v = self.x0, self.v0
        for s in range(self.steps):
            wp.launch(compute_forces, dim=self.n, inputs=[x, v, self.stiffness, self.drag], outputs=[self.fs[s]])
            wp.launch(integrate, dim=self.n, inputs=[x, v, self.fs[s], self.dt], outputs=[self.xs[s], self.vs[s]])
            x, v = self.xs[s], self.vs[s]
        wp.launch(target_loss, dim=self.n, inputs=[x, self.target], outputs=[self.loss])
        return self.loss


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--particles", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)

    system = SpringSystem(args.particles, args.steps)
    opt = wp.optim.SGD([system.v0], lr=args.lr)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = system.simulate()
        tape.backward(loss)
        opt.step([system.v0.grad])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}")
    return system


if __name__ == "__main__":
    main()
