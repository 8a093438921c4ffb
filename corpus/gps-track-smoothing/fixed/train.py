import argparse

import numpy as np
import warp as wp

from track import TrackModel


def synthetic_drive(n, rng):
    t = np.linspace(0.0, 1.0, n)
    path = np.stack([40.0 * t, 6.0 * np.sin(3.0 * t)], axis=1)
    sigma = rng.uniform(0.5, 2.0, size=n)
    readings = path + rng.normal(size=(n, 2)) * sigma[:, None]
    return readings, sigma


class Smoother:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.data_seed)
        readings, sigma = synthetic_drive(args.points, rng)
        init = readings + rng.normal(0.0, 0.3, size=readings.shape)
        self.model = TrackModel(readings, sigma, init, device)
        self.device = device
        self.smooth = args.smooth
        self.lr = args.lr
        self.params = {"pos": self.model.pos}

    def loss(self):
        fit, curv = self.model.terms()
        return float(np.mean(fit.numpy()) + self.smooth * np.sum(curv.numpy()))

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            fit, curv = self.model.terms()
        n = self.model.n
        tape.backward(
            grads={
                fit: wp.full(n, 1.0 / n, dtype=wp.float64, device=self.device),
                curv: wp.full(n - 2, self.smooth, dtype=wp.float64, device=self.device),
            }
        )
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def step(self):
        g = self.compute_gradients()
        for k, v in self.params.items():
            v.assign(v.numpy() - self.lr * g[k])
        return self.loss()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="smooth a GPS track with a curvature penalty")
    p.add_argument("--points", type=int, default=24)
    p.add_argument("--smooth", type=float, default=0.05)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--iterations", type=int, default=300)
    p.add_argument("--data-seed", type=int, default=11)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    device = args.device or wp.get_preferred_device()
    sm = Smoother(args, device)
    for it in range(args.iterations):
        loss = sm.step()
        if it % 25 == 0:
            print(f"iter {it:4d}  loss {loss:.6f}")
    np.savetxt("smoothed_track.csv", sm.model.pos.numpy(), delimiter=",")


if __name__ == "__main__":
    main()
