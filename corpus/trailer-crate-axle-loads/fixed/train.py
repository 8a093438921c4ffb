import argparse

import numpy as np
import warp as wp

import loading


class TrailerPlan:
    def __init__(self, device="cpu", n_crates=8, seed=4):
        rng = np.random.default_rng(seed)
        self.device = device
        self.n = n_crates
        self.wheelbase = 8.0
        self.gap = 0.9
        self.mass = wp.array(rng.uniform(0.4, 1.2, n_crates), dtype=wp.float64, device=device)
        self.lateral = wp.array(rng.uniform(-0.3, 0.3, n_crates), dtype=wp.float64, device=device)
        self.target_rear = 0.55 * float(self.mass.numpy().sum())
        self.target_side = 0.0
        self.x = wp.array(np.linspace(0.5, 6.5, n_crates), dtype=wp.float64, requires_grad=True, device=device)
        self.crates = wp.zeros(n_crates, dtype=loading.Crate, requires_grad=True, device=device)
        self.sums = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def forward(self):
        wp.launch(loading.place_crates, dim=self.n, inputs=[self.x, self.lateral, self.mass], outputs=[self.crates], device=self.device)
        self.sums.zero_()
        wp.launch(
            loading.axle_sums,
            dim=self.n,
            inputs=[self.crates, wp.float64(self.wheelbase), wp.float64(self.gap)],
            outputs=[self.sums],
            device=self.device,
        )
        wp.launch(
            loading.axle_misfit,
            dim=1,
            inputs=[self.sums, wp.float64(self.target_rear), wp.float64(self.target_side)],
            outputs=[self.loss],
            device=self.device,
        )

    def evaluate(self):
        self.forward()
        return float(self.loss.numpy()[0])

    def grad(self):
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(loss=self.loss)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return g

    def step(self, lr):
        self.x.assign(self.x.numpy() - lr * self.grad())
        return self.evaluate()


def main():
    parser = argparse.ArgumentParser(description="place crates on a trailer for a target rear-axle load")
    parser.add_argument("--crates", type=int, default=8)
    parser.add_argument("--iters", type=int, default=400)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    plan = TrailerPlan(n_crates=args.crates)
    for it in range(args.iters):
        loss = plan.step(args.lr)
        if it % 50 == 0:
            print(f"{it:4d} {loss:.6e}")
    print("positions", plan.x.numpy())


if __name__ == "__main__":
    main()
