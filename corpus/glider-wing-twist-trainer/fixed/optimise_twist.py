import argparse

import numpy as np
import warp as wp
import warp.optim

from wing import section_lift, span_cost


class TwistTrainer:
    def __init__(self, stations, lr):
        y = np.linspace(-0.9, 0.9, stations)
        self.chord = wp.array(0.3 * np.sqrt(1.0 - y * y) + 0.1, dtype=wp.float32)
        ell = np.sqrt(1.0 - y * y)
        self.elliptic = wp.array(ell / ell.sum(), dtype=wp.float32)
        self.twist = wp.zeros(stations, dtype=wp.float32, requires_grad=True)
        self.opt = warp.optim.Adam([self.twist], lr=lr)
        self.n = stations
        self.tape = wp.Tape()
        self.last = 0.0

    def compute_gradient(self):
        self.tape.reset()
        lift = wp.zeros(self.n, dtype=wp.float32, requires_grad=True)
        drag = wp.zeros(self.n, dtype=wp.float32, requires_grad=True)
        cost = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        with self.tape:
            wp.launch(section_lift, dim=self.n, inputs=[self.twist, self.chord, 0.05], outputs=[lift, drag])
            wp.launch(span_cost, dim=self.n, inputs=[lift, drag, self.elliptic, 0.6], outputs=[cost])
        self.tape.backward(cost)
        self.last = float(cost.numpy()[0])

    def apply(self):
        self.opt.step([self.twist.grad])


def main():
    parser = argparse.ArgumentParser(description="optimise glider wing twist toward an elliptic lift distribution")
    parser.add_argument("--stations", type=int, default=8)
    parser.add_argument("--iters", type=int, default=80)
    parser.add_argument("--lr", type=float, default=0.02)
    args = parser.parse_args()

    trainer = TwistTrainer(args.stations, args.lr)
    for it in range(args.iters):
        trainer.compute_gradient()
        trainer.apply()
        if it % 10 == 0:
            print(f"iter {it}: span cost {trainer.last:.6f}")
    print("twist [rad]", trainer.twist.numpy())


if __name__ == "__main__":
    main()
