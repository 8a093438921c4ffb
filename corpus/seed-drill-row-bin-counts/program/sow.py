import argparse

import numpy as np
import warp as wp

from planter import bin_counts, drop_seeds, row_cost, spacing_cost


@wp.kernel
def shift(release: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    release[i] = release[i] - lr * g[i]


def main():
    parser = argparse.ArgumentParser(description="time seed releases of a drill so each row bin gets its seeds")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--bins", type=int, default=4)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.2)
    args = parser.parse_args()

    release = wp.array(np.linspace(0.05, 1.45, args.seeds) + 0.0137, dtype=wp.float64, requires_grad=True)
    wanted = wp.array(np.full(args.bins, args.seeds / args.bins), dtype=wp.float64)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            landing = wp.zeros(args.seeds, dtype=wp.float64, requires_grad=True)
            wp.launch(drop_seeds, dim=args.seeds,
                      inputs=[release, wp.float64(0.8), wp.float64(0.35), wp.float64(0.05)], outputs=[landing])
            counts = wp.zeros(args.bins, dtype=wp.float64, requires_grad=True)
            wp.launch(bin_counts, dim=args.seeds, inputs=[landing, wp.float64(0.5), args.bins], outputs=[counts])
            cost = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(row_cost, dim=args.bins, inputs=[counts, wanted], outputs=[cost])
            wp.launch(spacing_cost, dim=args.seeds, inputs=[landing, wp.float64(0.25), wp.float64(0.5)],
                      outputs=[cost])
        tape.backward(cost)
        wp.launch(shift, dim=args.seeds, inputs=[release, release.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"{it}: row cost {cost.numpy()[0]:.4f}  counts {counts.numpy()}")


if __name__ == "__main__":
    main()
