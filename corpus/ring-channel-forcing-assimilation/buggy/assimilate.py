import argparse

import numpy as np
import warp as wp

from burgers import Channel


class WindowedAssimilation:
    def __init__(self, cells=64, windows=4, steps_per_window=20, n_probes=12, seed=9, device=None):
        rng = np.random.default_rng(seed)
        self.device = device
        self.channel = Channel(cells, device=device)
        self.windows = windows
        self.spw = steps_per_window
        x = (np.arange(cells) + 0.5) / cells
        self.u0 = wp.array(0.5 + 0.2 * np.sin(2 * np.pi * x), dtype=wp.float64, device=device)
        true_forcing = 0.3 * np.cos(2 * np.pi * x) + 0.2 * np.sin(6 * np.pi * x + 0.4)
        self.probes = wp.array(np.sort(rng.choice(cells, n_probes, replace=False)).astype(np.int32), dtype=wp.int32,
                               device=device)
        u = self.u0
        self.obs = []
        f = wp.array(true_forcing, dtype=wp.float64, device=device)
        for _ in range(windows):
            u = self.channel.advance(u, f, self.spw)
            vals = u.numpy()[self.probes.numpy()] + 0.002 * rng.standard_normal(n_probes)
            self.obs.append(wp.array(vals, dtype=wp.float64, device=device))
        self.forcing = wp.array(0.1 * rng.standard_normal(cells), dtype=wp.float64, device=device,
                                requires_grad=True)

    def cost(self):
        u = self.u0
        total = 0.0
        for w in range(self.windows):
            u = self.channel.advance(u, self.forcing, self.spw)
            total += float(self.channel.misfit(u, self.probes, self.obs[w]).numpy()[0])
        return total

    def cost_and_gradient(self):
        checkpoints = [self.u0]
        for w in range(self.windows):
            checkpoints.append(self.channel.advance(checkpoints[-1], self.forcing, self.spw))
        grad = np.zeros(self.channel.cells)
        total = 0.0
        for w in reversed(range(self.windows)):
            start = wp.clone(checkpoints[w], requires_grad=True)
            tape = wp.Tape()
            with tape:
                end = self.channel.advance(start, self.forcing, self.spw)
                lw = self.channel.misfit(end, self.probes, self.obs[w])
            tape.backward(loss=lw)
            grad += self.forcing.grad.numpy()
            total += float(lw.numpy()[0])
            tape.zero()
        return total, grad

    def descend(self, iterations, lr=0.5, log=False):
        history = []
        for it in range(iterations):
            c, g = self.cost_and_gradient()
            self.forcing.assign(self.forcing.numpy() - lr * g)
            history.append(c)
            if log and it % 10 == 0:
                print(f"iter {it:4d} cost {c:.6e}")
        return history


def main():
    ap = argparse.ArgumentParser(description="recover a steady forcing in a periodic channel from probe data")
    ap.add_argument("--cells", type=int, default=64)
    ap.add_argument("--windows", type=int, default=4)
    ap.add_argument("--steps-per-window", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.5)
    args = ap.parse_args()
    wp.init()
    da = WindowedAssimilation(args.cells, args.windows, args.steps_per_window)
    da.descend(args.iterations, args.lr, log=True)
    np.savetxt("forcing.txt", da.forcing.numpy())


if __name__ == "__main__":
    main()
