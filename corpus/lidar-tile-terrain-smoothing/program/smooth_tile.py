import argparse

import numpy as np
import warp as wp

from terrain import TerrainTile


class TileSmoother:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.seed)
        self.tile = TerrainTile(args.width, args.smooth, device, rng)
        self.lr = args.lr
        self.params = {"h": self.tile.h}

    def energy(self):
        return float(self.tile.energy().numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.tile.energy()
        tape.backward(loss)
        g = {"h": self.tile.h.grad.numpy().copy()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        self.tile.h.assign(self.tile.h.numpy() - self.lr * g["h"])
        return self.energy()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="smooth a lidar terrain tile (float32 heights)")
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--smooth", type=float, default=2.0)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    sm = TileSmoother(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        e = sm.step()
        if it % 20 == 0:
            print(f"iter {it:4d}  energy {e:.5f}")
    np.save("tile_smoothed.npy", sm.tile.h.numpy().reshape(args.width, args.width))


if __name__ == "__main__":
    main()
