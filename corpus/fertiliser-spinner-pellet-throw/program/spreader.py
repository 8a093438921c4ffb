import argparse

import numpy as np
import warp as wp

from pellets import flight_step, housekeeping, landing_error


class SpinnerSpread:
    def __init__(self, args, device):
        self.device = device
        self.n = args.vanes
        self.steps = args.steps
        self.dt = args.dt
        self.drag = 0.02
        rng = np.random.default_rng(args.seed)
        ang = np.linspace(-0.9, 0.9, self.n)
        self.x0 = wp.array(np.tile([0.0, 0.0, 0.8], (self.n, 1)), dtype=wp.vec3d, device=device)
        target = np.stack([12.0 * np.sin(ang), 12.0 * np.cos(ang), np.zeros(self.n)], axis=1)
        self.target = wp.array(target + rng.normal(0.0, 0.3, target.shape), dtype=wp.vec3d, device=device)
        v0 = np.stack([10.0 * np.sin(ang), 10.0 * np.cos(ang), np.full(self.n, 3.0)], axis=1)
        self.v0 = wp.array(v0, dtype=wp.vec3d, requires_grad=True, device=device)
        self.params = {"v0": self.v0}
        self.lr = args.lr
        self.log = []

    def simulate(self):
        d = self.device
        airborne = wp.zeros(1, dtype=wp.int32, device=d)
        out_of_field = wp.zeros(self.n, dtype=wp.int32, device=d)
        picked = wp.full(1, 2**30, dtype=wp.int32, device=d)
        lo = wp.vec3d(-20.0, -5.0, -5.0)
        hi = wp.vec3d(20.0, 25.0, 10.0)
        cursor = wp.vec3d(0.0, 10.0, 0.0)
        x, v = self.x0, self.v0
        for _ in range(self.steps):
            xn = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=d)
            vn = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=d)
            wp.launch(flight_step, dim=self.n, inputs=[x, v, wp.float64(self.drag), wp.float64(self.dt)],
                      outputs=[xn, vn], device=d)
            wp.launch(housekeeping, dim=self.n, inputs=[xn, lo, hi, cursor],
                      outputs=[airborne, out_of_field, picked], device=d)
            x, v = xn, vn
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=d)
        wp.launch(landing_error, dim=self.n, inputs=[x, self.target], outputs=[loss], device=d)
        return loss, airborne, out_of_field, picked

    def spread_error(self):
        return float(self.simulate()[0].numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss, airborne, out_of_field, picked = self.simulate()
        tape.backward(loss)
        self.log.append((int(airborne.numpy()[0]), int(out_of_field.numpy().sum()), int(picked.numpy()[0]) % 1024))
        g = {"v0": self.v0.grad.numpy().copy()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        self.v0.assign(self.v0.numpy() - self.lr * g["v0"])
        return self.spread_error()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="vane exit velocities of a fertiliser spinner for a target throw pattern")
    p.add_argument("--vanes", type=int, default=6)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--dt", type=float, default=0.025)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    sp = SpinnerSpread(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        err = sp.step()
        if it % 10 == 0:
            airborne, outside, picked = sp.log[-1]
            print(f"iter {it:3d}  spread error {err:.4f}  airborne {airborne}  outside {outside}  picked {picked}")


if __name__ == "__main__":
    main()
