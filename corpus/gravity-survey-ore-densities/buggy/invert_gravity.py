import argparse

import numpy as np
import warp as wp


@wp.kernel
def vertical_gravity(
    stations: wp.array(dtype=wp.vec3d),
    blocks: wp.array(dtype=wp.vec3d),
    density: wp.array(dtype=wp.float64),
    volume: wp.float64,
    gz: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    for j in range(blocks.shape[0]):
        d = blocks[j] - stations[i]
        r2 = wp.dot(d, d)
        gz[i] += density[j] * volume * d[2] / (r2 * wp.sqrt(r2))


@wp.kernel
def misfit(gz: wp.array(dtype=wp.float64), observed: wp.array(dtype=wp.float64), damping: wp.float64, density: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = gz[i] - observed[i]
    wp.atomic_add(loss, 0, d * d)
    if i < density.shape[0]:
        wp.atomic_add(loss, 0, damping * density[i] * density[i])


class GravityInversion:
    def __init__(self, grid, stations, seed):
        rng = np.random.default_rng(seed)
        g = np.linspace(-1.0, 1.0, grid)
        bx, by = np.meshgrid(g, g)
        blocks = np.stack([bx.ravel(), by.ravel(), np.full(grid * grid, -0.6)], axis=1)
        st = np.stack([rng.uniform(-1.2, 1.2, stations), rng.uniform(-1.2, 1.2, stations), np.zeros(stations)], axis=1)
        rho = np.where(np.hypot(blocks[:, 0] - 0.3, blocks[:, 1] + 0.2) < 0.6, 1.0, 0.0)
        d = blocks[None, :, :] - st[:, None, :]
        r2 = (d**2).sum(-1)
        self.volume = (2.0 / grid) ** 2 * 0.3
        obs = (rho[None, :] * self.volume * d[:, :, 2] / r2**1.5).sum(1)
        self.stations = wp.array(st, dtype=wp.vec3d)
        self.blocks = wp.array(blocks, dtype=wp.vec3d)
        self.observed = wp.array(obs + rng.normal(0.0, 0.002, stations), dtype=wp.float64)
        self.density = wp.array(np.full(grid * grid, 0.3), dtype=wp.float64, requires_grad=True)

    def loss(self, damping):
        n = self.stations.shape[0]
        gz = wp.zeros(n, dtype=wp.float64, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(vertical_gravity, dim=n, inputs=[self.stations, self.blocks, self.density, wp.float64(self.volume)], outputs=[gz])
        wp.launch(misfit, dim=max(n, self.density.shape[0]), inputs=[gz, self.observed, wp.float64(damping), self.density], outputs=[loss])
        return loss


def main():
    ap = argparse.ArgumentParser(description="invert a gravity survey for block densities")
    ap.add_argument("--grid", type=int, default=4)
    ap.add_argument("--stations", type=int, default=20)
    ap.add_argument("--damping", type=float, default=1e-3)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=10)
    args = ap.parse_args()
    inv = GravityInversion(args.grid, args.stations, args.seed)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = inv.loss(args.damping)
        tape.backward(loss)
        inv.density.assign(inv.density.numpy() - args.lr * inv.density.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  misfit {loss.numpy()[0]:.6e}")
    print(np.round(inv.density.numpy().reshape(args.grid, args.grid), 2))


if __name__ == "__main__":
    main()
