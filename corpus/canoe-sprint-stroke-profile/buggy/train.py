import argparse

import numpy as np
import warp as wp

import boat


class StrokePlan:
    def __init__(self, device="cpu", knots=8, steps_per_knot=5):
        self.device = device
        self.knots = knots
        self.steps_per_knot = steps_per_knot
        self.mass = 90.0
        self.cd = 0.004
        self.wetted = 2.0
        self.dt = 0.2
        self.target = 30.0
        self.effort = 1.0e-5
        self.force = wp.array(np.linspace(120.0, 80.0, knots), dtype=wp.float64, requires_grad=True, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def forward(self):
        x = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        v = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for k in range(self.knots):
            for _ in range(self.steps_per_knot):
                x_next = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
                v_next = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
                wp.launch(
                    boat.advance,
                    dim=1,
                    inputs=[x, v, self.force, k, wp.float64(self.mass), wp.float64(self.cd), wp.float64(self.wetted), wp.float64(self.dt)],
                    outputs=[x_next, v_next],
                    device=self.device,
                )
                x, v = x_next, v_next
        self.loss.zero_()
        wp.launch(
            boat.race_loss,
            dim=self.knots,
            inputs=[x, self.force, wp.float64(self.target), wp.float64(self.effort)],
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
        g = self.force.grad.numpy().copy()
        tape.zero()
        return g

    def step(self, lr):
        self.force.assign(self.force.numpy() - lr * self.grad())
        return self.evaluate()


def main():
    parser = argparse.ArgumentParser(description="plan a stroke force profile for a canoe sprint start")
    parser.add_argument("--knots", type=int, default=8)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--lr", type=float, default=20.0)
    args = parser.parse_args()
    plan = StrokePlan(knots=args.knots)
    for it in range(args.iters):
        loss = plan.step(args.lr)
        if it % 20 == 0:
            print(f"{it:4d} {loss:.6e}")
    print("force profile", plan.force.numpy())


if __name__ == "__main__":
    main()
