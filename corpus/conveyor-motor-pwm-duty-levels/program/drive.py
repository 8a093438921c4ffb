import argparse

import numpy as np
import warp as wp


@wp.kernel
def pwm_spinup(
    command: wp.array(dtype=wp.float64),
    levels: wp.float64,
    gain: wp.float64,
    tau: wp.float64,
    dt: wp.float64,
    steps: int,
    speed: wp.array(dtype=wp.float64),
):
    m = wp.tid()
    duty = wp.floor(wp.clamp(command[m], wp.float64(0.0), wp.float64(1.0)) * levels) / levels
    w = wp.float64(0.0)
    for _ in range(steps):
        w = w + dt * (gain * duty - w) / tau
    speed[m] = w


@wp.kernel
def belt_cost(
    speed: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    command: wp.array(dtype=wp.float64),
    nominal: wp.float64,
    effort: wp.float64,
    cost: wp.array(dtype=wp.float64),
):
    m = wp.tid()
    d = speed[m] - target[m]
    e = command[m] - nominal
    wp.atomic_add(cost, 0, d * d + effort * e * e)


@wp.kernel
def adjust(command: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    m = wp.tid()
    command[m] = command[m] - lr * g[m]


def main():
    parser = argparse.ArgumentParser(description="tune PWM commands of conveyor motors to belt speed targets")
    parser.add_argument("--motors", type=int, default=4)
    parser.add_argument("--levels", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    target = wp.array(np.linspace(1.2, 2.1, args.motors), dtype=wp.float64)
    command = wp.array(np.linspace(0.31, 0.47, args.motors) + 0.003, dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            speed = wp.zeros(args.motors, dtype=wp.float64, requires_grad=True)
            wp.launch(pwm_spinup, dim=args.motors,
                      inputs=[command, wp.float64(args.levels), wp.float64(3.0), wp.float64(0.4), wp.float64(0.05),
                              args.steps], outputs=[speed])
            cost = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(belt_cost, dim=args.motors, inputs=[speed, target, command, wp.float64(0.5), wp.float64(0.1)],
                      outputs=[cost])
        tape.backward(cost)
        wp.launch(adjust, dim=args.motors, inputs=[command, command.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"{it}: cost {cost.numpy()[0]:.5f} commands {command.numpy()}")


if __name__ == "__main__":
    main()
