import argparse

import numpy as np
import warp as wp

from ballistics import fly, track_misfit


@wp.kernel
def step_coef(coef: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), rate: wp.array(dtype=wp.float64)):
    i = wp.tid()
    coef[i] = coef[i] - rate[i] * g[i]


def radar_windows(true_coef, shells, windows, steps, dt):
    rng = np.random.default_rng(7)
    ang = rng.uniform(0.6, 1.1, shells)
    spd = rng.uniform(30.0, 45.0, shells)
    pos = wp.zeros(shells, dtype=wp.vec2d)
    vel = wp.array(np.stack([spd * np.cos(ang), spd * np.sin(ang)], 1), dtype=wp.vec2d)
    starts = []
    for _ in range(windows + 1):
        starts.append((wp.clone(pos), wp.clone(vel)))
        pos, vel = fly(pos, vel, true_coef, steps, dt)
    return starts


def main():
    parser = argparse.ArgumentParser(description="fit drag coefficient and head wind to windowed radar tracks")
    parser.add_argument("--shells", type=int, default=4)
    parser.add_argument("--windows", type=int, default=4)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--dt", type=float, default=0.05)
    parser.add_argument("--iters", type=int, default=30)
    args = parser.parse_args()

    true_coef = wp.array([0.004, 3.0], dtype=wp.float64)
    starts = radar_windows(true_coef, args.shells, args.windows, args.steps, args.dt)
    coef = wp.array([0.002, 0.0], dtype=wp.float64, requires_grad=True)
    rate = wp.array([1e-7, 2e-2], dtype=wp.float64)
    weight = wp.array([1.0 / args.windows], dtype=wp.float64)

    for it in range(args.iters):
        total = 0.0
        for w in range(args.windows):
            tape = wp.Tape()
            with tape:
                pos, vel = fly(starts[w][0], starts[w][1], coef, args.steps, args.dt)
                err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
                wp.launch(track_misfit, dim=args.shells, inputs=[pos, starts[w + 1][0]], outputs=[err])
            tape.backward(err)
            total += err.numpy()[0] / args.windows
        wp.launch(step_coef, dim=2, inputs=[coef, coef.grad, rate])
        coef.grad.zero_()
        if it % 5 == 0:
            print(f"{it:3d} mean window misfit {total:.5e}  coef {coef.numpy()}")


if __name__ == "__main__":
    main()
