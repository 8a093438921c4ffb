import argparse

import numpy as np
import warp as wp

from scan import MountModel, ScanData


class Calibrator:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.data_seed)
        self.device = device
        self.data = ScanData(args.points, device, rng)
        self.model = MountModel(self.data, device)
        self.lr = args.lr
        self.params = {"offset": self.model.offset, "yaw": self.model.yaw}

    def mean_error(self):
        res = self.model.residuals()
        return float(np.mean(res.numpy()))

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            res = self.model.residuals()
        weights = wp.full(self.data.n, 1.0 / self.data.n, dtype=wp.float64, device=self.device)
        tape.backward(grads={res: weights})
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def step(self):
        grads = self.compute_gradients()
        for k, v in self.params.items():
            v.assign(v.numpy() - self.lr * grads[k])
        return self.mean_error()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="lidar mount calibration against surveyed wall points")
    p.add_argument("--points", type=int, default=512)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--data-seed", type=int, default=3)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    device = args.device or wp.get_preferred_device()
    cal = Calibrator(args, device)
    for it in range(args.iterations):
        err = cal.step()
        if it % 20 == 0:
            print(f"iter {it:4d}  mean squared error {err:.6f}")
    print("offset", cal.model.offset.numpy(), "yaw", cal.model.yaw.numpy())


if __name__ == "__main__":
    main()
