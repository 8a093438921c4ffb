import argparse

import numpy as np
import warp as wp

from loop_model import ConvectionLoops, rk4_np


def synthetic_observations(x_true, steps, every, dt, noise, rng):
    s = x_true.copy()
    obs = []
    for k in range(1, steps + 1):
        s = rk4_np(s, dt)
        if k % every == 0:
            obs.append(s[:, 0] + rng.normal(0.0, noise, size=s.shape[0]))
    return np.array(obs)


class Assimilation:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.data_seed)
        x_true = np.array([[1.0, 1.0, 20.0]]) + rng.normal(0.0, 3.0, size=(args.members, 3))
        self.steps = int(round(args.window / args.dt))
        self.obs_np = synthetic_observations(x_true, self.steps, args.every, args.dt, args.noise, rng)
        self.model = ConvectionLoops(args.members, self.steps, args.every, args.dt, device)
        self.obs = wp.array(self.obs_np, dtype=wp.float64, device=device)
        first_guess = x_true + rng.normal(0.0, 0.5, size=x_true.shape)
        self.x0 = wp.array(first_guess, dtype=wp.vec3d, requires_grad=True, device=device)
        self.lr = args.lr
        self.params = {"x0": self.x0}

    def cost(self):
        return float(self.model.rollout_cost(self.x0, self.obs).numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.model.rollout_cost(self.x0, self.obs)
        tape.backward(loss)
        g = {"x0": self.x0.grad.numpy().copy()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        self.x0.assign(self.x0.numpy() - self.lr * g["x0"])
        return self.cost()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="estimate the initial state of convection loops from temperature records")
    p.add_argument("--members", type=int, default=4)
    p.add_argument("--window", type=float, default=14.0)
    p.add_argument("--dt", type=float, default=0.02)
    p.add_argument("--every", type=int, default=5)
    p.add_argument("--noise", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--data-seed", type=int, default=2)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    da = Assimilation(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        cost = da.step()
        g = da.compute_gradients()["x0"]
        print(f"iter {it:3d}  cost {cost:.4f}  |grad| {np.linalg.norm(g):.3e}")


if __name__ == "__main__":
    main()
