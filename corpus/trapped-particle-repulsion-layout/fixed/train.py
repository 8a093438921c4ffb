"""Relax a 2D particle layout: soft pairwise repulsion balanced by a harmonic trap."""
import argparse

import numpy as np
import warp as wp

wp.config.quiet = True


@wp.func
def repulsion(d: float, sigma: float):
    return wp.exp(-d / sigma)


@wp.kernel
def pair_energy(x: wp.array(dtype=wp.vec2), sigma: float, strength: float, energy: wp.array(dtype=float)):
    i, j = wp.tid()
    if i == j:
        return
    r = x[i] - x[j]
    d = wp.sqrt(wp.dot(r, r))
    wp.atomic_add(energy, 0, 0.5 * strength * repulsion(d, sigma))


@wp.kernel
def trap_energy(x: wp.array(dtype=wp.vec2), k: float, energy: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(energy, 0, 0.5 * k * wp.dot(x[i], x[i]))


@wp.kernel
def descend(x: wp.array(dtype=wp.vec2), g: wp.array(dtype=wp.vec2), lr: float):
    i = wp.tid()
    x[i] = x[i] - lr * g[i]


def initial_layout(n, seed=11):
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.6, size=(n, 2))


def total_energy(x, energy, sigma, strength, k):
    n = x.shape[0]
    energy.zero_()
    wp.launch(pair_energy, dim=(n, n), inputs=[x, sigma, strength], outputs=[energy])
    wp.launch(trap_energy, dim=n, inputs=[x, k], outputs=[energy])
    return energy


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", "--num", type=int, default=12)
    ap.add_argument("--sigma", type=float, default=0.5)
    ap.add_argument("--strength", type=float, default=1.0)
    ap.add_argument("--trap", type=float, default=1.0)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.05)
    args = ap.parse_args(argv)

    x = wp.array(initial_layout(args.num), dtype=wp.vec2, requires_grad=True)
    energy = wp.zeros(1, dtype=float, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            total_energy(x, energy, args.sigma, args.strength, args.trap)
        tape.backward(energy)
        wp.launch(descend, dim=args.num, inputs=[x, x.grad, args.lr])
        tape.zero()
        if it % 10 == 0:
            print("iter", it, "energy", energy.numpy()[0])
    print("final layout spread", np.linalg.norm(x.numpy(), axis=1).mean())


if __name__ == "__main__":
    main()
