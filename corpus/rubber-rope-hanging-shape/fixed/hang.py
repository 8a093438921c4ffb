import argparse

import numpy as np
import warp as wp

from material import neo_hookean_1d


@wp.kernel
def rope_energy(
    z: wp.array(dtype=wp.float64),
    rest: wp.float64,
    mu: wp.float64,
    lam: wp.float64,
    weight: wp.array(dtype=wp.float64),
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    e = -weight[i] * z[i]
    if i + 1 < z.shape[0]:
        J = (z[i + 1] - z[i]) / rest
        e = e + rest * neo_hookean_1d(J, mu, lam)
    wp.atomic_add(energy, 0, e)


def total_energy(z, weight, rest, mu, lam):
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(rope_energy, dim=z.shape[0], inputs=[z, wp.float64(rest), wp.float64(mu), wp.float64(lam), weight], outputs=[out])
    return out


def main():
    ap = argparse.ArgumentParser(description="static shape of a hanging rubber rope with lumped weights")
    ap.add_argument("--nodes", type=int, default=9)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.004)
    ap.add_argument("--mu", type=float, default=4.0)
    ap.add_argument("--lam", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=21)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    rest = 1.0 / (args.nodes - 1)
    weight = wp.array(rng.uniform(0.5, 1.5, args.nodes) / args.nodes, dtype=wp.float64)
    z0 = np.linspace(0.0, 1.0, args.nodes) * 1.2 + rng.normal(0.0, 0.01, args.nodes)
    z0[0] = 0.0
    z = wp.array(z0, dtype=wp.float64, requires_grad=True)
    free = np.ones(args.nodes)
    free[0] = 0.0

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            e = total_energy(z, weight, rest, args.mu, args.lam)
        tape.backward(e)
        z.assign(z.numpy() - args.lr * free * z.grad.numpy())
        tape.zero()
        if it % 20 == 0:
            print(f"iter {it:4d}  energy {e.numpy()[0]:.6f}  tip {z.numpy()[-1]:.4f}")


if __name__ == "__main__":
    main()
