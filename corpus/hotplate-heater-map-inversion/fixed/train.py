import argparse

import numpy as np
import warp as wp

from solver import HeatSolver, SensorArray


class HeaterInversion:
    def __init__(self, n=12, steps=60, n_sensors=24, seed=5, device=None):
        rng = np.random.default_rng(seed)
        self.device = device
        self.solver = HeatSolver((n, n), steps, device=device)
        self.initial = np.zeros((n, n), dtype=np.float32)
        yy, xx = np.mgrid[0:n, 0:n] / (n - 1)
        true_power = 0.4 * np.exp(-((xx - 0.35) ** 2 + (yy - 0.6) ** 2) / 0.05) + 0.1 * rng.random((n, n))
        rows = rng.integers(1, n - 1, n_sensors)
        cols = rng.integers(1, n - 1, n_sensors)
        truth = self.solver.run(self.initial, wp.array(true_power.astype(np.float32), dtype=float, device=device))
        readings = truth.numpy()[rows, cols].copy()
        self.sensors = SensorArray(rows, cols, readings, device=device)
        guess = 0.2 + 0.05 * rng.random((n, n))
        self.power = wp.array(guess.astype(np.float32), dtype=float, device=device, requires_grad=True)

    def loss(self):
        temp = self.solver.run(self.initial, self.power)
        return float(self.sensors.misfit(temp).numpy()[0])

    def grad(self):
        tape = wp.Tape()
        with tape:
            temp = self.solver.run(self.initial, self.power)
            loss = self.sensors.misfit(temp)
        tape.backward(loss)
        g = self.power.grad.numpy().copy()
        tape.zero()
        return float(loss.numpy()[0]), g

    def fit(self, iterations, lr=2.0, log=None):
        losses = []
        for it in range(iterations):
            value, g = self.grad()
            self.power.assign(np.maximum(self.power.numpy() - lr * g, 0.0))
            losses.append(value)
            if log is not None:
                log(it, value, g)
        return losses


def main():
    ap = argparse.ArgumentParser(description="recover a heater power map from plate thermocouples")
    ap.add_argument("--grid", type=int, default=12)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--lr", type=float, default=2.0)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    wp.init()
    inv = HeaterInversion(args.grid, args.steps)

    def log(it, value, g):
        if it % 20 == 0:
            print(f"it {it:4d} misfit {value:.4e} |g|={np.linalg.norm(g):.3e}")

    inv.fit(args.iterations, args.lr, log)
    if args.show:
        import matplotlib.pyplot as plt
        plt.imshow(inv.power.numpy())
        plt.colorbar()
        plt.show()


if __name__ == "__main__":
    main()
