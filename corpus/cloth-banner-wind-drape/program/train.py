import argparse

import numpy as np
import warp as wp

from sim import Banner


class Fit:
    def __init__(self, device="cpu", steps=80, seed=0):
        self.cloth = Banner(steps=steps, device=device)
        rng = np.random.default_rng(seed)
        n = self.cloth.n
        true_wind = np.zeros((n, 3))
        true_wind[:, 1] = 0.02 + 0.01 * rng.random(n)
        true_wind[:, 2] = 0.005 * rng.standard_normal(n)
        self.target = self.cloth.rollout(wp.array(true_wind, dtype=wp.vec3d, device=device))
        guess = np.zeros((n, 3))
        guess[:, 1] = 0.01
        guess += 0.002 * rng.standard_normal((n, 3))
        self.wind = wp.array(guess, dtype=wp.vec3d, device=device, requires_grad=True)
        self.m = np.zeros((n, 3))
        self.s = np.zeros((n, 3))
        self.t = 0

    def evaluate(self):
        return float(self.cloth.loss(self.wind, self.target).numpy()[0])

    def step_gradient(self):
        tape = wp.Tape()
        with tape:
            out = self.cloth.loss(self.wind, self.target)
        tape.backward(out)
        g = self.wind.grad.numpy().copy()
        tape.zero()
        return float(out.numpy()[0]), g

    def adam(self, g, lr=2e-3, b1=0.9, b2=0.999, eps=1e-12):
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * g
        self.s = b2 * self.s + (1 - b2) * g * g
        mh = self.m / (1 - b1 ** self.t)
        sh = self.s / (1 - b2 ** self.t)
        w = self.wind.numpy() - lr * mh / (np.sqrt(sh) + eps)
        self.wind.assign(w)

    def run(self, iterations, log_every=0):
        history = []
        for it in range(iterations):
            value, g = self.step_gradient()
            self.adam(g)
            history.append(value)
            if log_every and it % log_every == 0:
                print(f"iter {it:4d}  loss {value:.6e}  |g| {np.linalg.norm(g):.3e}")
        return history


def main():
    parser = argparse.ArgumentParser(description="fit per-node wind to a captured banner drape")
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--steps", type=int, default=80)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--plot", action="store_true")
    args = parser.parse_args()
    wp.init()
    fit = Fit(device=args.device, steps=args.steps)
    history = fit.run(args.iters, log_every=10)
    if args.plot:
        import matplotlib.pyplot as plt
        plt.semilogy(history)
        plt.xlabel("iteration")
        plt.ylabel("drape error")
        plt.savefig("banner_fit.png")


if __name__ == "__main__":
    main()
