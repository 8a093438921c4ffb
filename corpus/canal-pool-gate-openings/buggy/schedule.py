import argparse

import numpy as np
import warp as wp

from canal import gate_smoothness, level_misfit, simulate


@wp.kernel
def combine_step(gate: wp.array(dtype=wp.float64), g_data: wp.array(dtype=wp.float64),
                 g_prior: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    gate[i] = gate[i] - lr * (g_data[i] + g_prior[i])


def main():
    parser = argparse.ArgumentParser(description="set canal gate openings that hold every pool at its level")
    parser.add_argument("--pools", type=int, default=6)
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--smooth", type=float, default=0.5)
    args = parser.parse_args()

    gate = wp.array(np.linspace(0.3, 0.8, args.pools), dtype=wp.float64, requires_grad=True)
    prior_grad = wp.zeros(args.pools, dtype=wp.float64)

    prior_tape = wp.Tape()
    with prior_tape:
        reg = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(gate_smoothness, dim=args.pools, inputs=[gate, wp.float64(args.smooth)], outputs=[reg])
    prior_tape.backward(reg)
    wp.copy(prior_grad, gate.grad)
    prior_tape.zero()

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            level = simulate(gate, args.pools, args.steps)
            miss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(level_misfit, dim=args.pools, inputs=[level, wp.float64(1.2)], outputs=[miss])
        tape.backward(miss)
        wp.launch(combine_step, dim=args.pools, inputs=[gate, gate.grad, prior_grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"{it}: level misfit {miss.numpy()[0]:.6f}")
    print("gates", gate.numpy())


if __name__ == "__main__":
    main()
