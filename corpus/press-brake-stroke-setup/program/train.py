import argparse

import numpy as np
import warp as wp

from press import die_forces, setup_cost


class StrokeSetup:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.seed)
        self.device = device
        self.n = args.stations
        gap = rng.uniform(0.010, 0.012, self.n)
        probe = rng.choice([-2e-3, -1e-3, 1e-3, 2e-3, 3e-3], size=self.n)
        self.gap = wp.array(gap, dtype=wp.float64, device=device)
        self.stroke = wp.array(gap + probe, dtype=wp.float64, requires_grad=True, device=device)
        self.stiffness = args.stiffness
        self.target = args.target_force
        self.smooth = args.smooth
        self.lr = args.lr
        self.params = {"stroke": self.stroke}

    def forward(self):
        force = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(die_forces, dim=self.n, inputs=[self.stroke, self.gap, wp.float64(self.stiffness)],
                  outputs=[force], device=self.device)
        wp.launch(setup_cost, dim=self.n,
                  inputs=[force, self.stroke, wp.float64(self.target), wp.float64(self.smooth)],
                  outputs=[loss], device=self.device)
        return loss

    def cost(self):
        return float(self.forward().numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"stroke": self.stroke.grad.numpy().copy()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        self.stroke.assign(self.stroke.numpy() - self.lr * g["stroke"])
        return self.cost()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="punch strokes of a multi-station press brake for an even bending force")
    p.add_argument("--stations", type=int, default=10)
    p.add_argument("--stiffness", type=float, default=5.0e4)
    p.add_argument("--target-force", type=float, default=100.0)
    p.add_argument("--smooth", type=float, default=1.0e3)
    p.add_argument("--lr", type=float, default=2e-7)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--seed", type=int, default=23)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    setup = StrokeSetup(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        c = setup.step()
        if it % 20 == 0:
            print(f"iter {it:4d}  cost {c:.6f}")
    print("strokes [mm]", np.round(1e3 * setup.stroke.numpy(), 3))


if __name__ == "__main__":
    main()
