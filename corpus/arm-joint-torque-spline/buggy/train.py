import argparse

import numpy as np
import warp as wp

from arm import Arm, torque_profile


@wp.kernel
def gradient_step(knots: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    j = wp.tid()
    knots[j] = knots[j] - lr * g[j]


def main():
    parser = argparse.ArgumentParser(description="plan a torque schedule that swings an arm to a target angle")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--knots", type=int, default=6)
    parser.add_argument("--goal", type=float, default=1.0)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    arm = Arm(args.steps)
    knots = wp.array(np.linspace(0.8, 0.2, args.knots), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tau = wp.zeros(args.steps, dtype=wp.float64, requires_grad=True)
        wp.launch(torque_profile, dim=args.steps, inputs=[knots, args.steps], outputs=[tau])
        tape = wp.Tape()
        with tape:
            cost = arm.rollout(tau, knots, args.goal, 1e-3)
        tape.backward(cost)
        wp.launch(gradient_step, dim=args.knots, inputs=[knots, knots.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 10 == 0:
            print(f"{it:3d} cost {cost.numpy()[0]:.6f}")
    print("knots", knots.numpy())


if __name__ == "__main__":
    main()
