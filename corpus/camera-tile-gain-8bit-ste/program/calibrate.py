import argparse

import numpy as np
import warp as wp

from sensor import expose


@wp.kernel
def gain_step(gain: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    gain[i] = gain[i] - lr * g[i]


def main():
    parser = argparse.ArgumentParser(description="calibrate per-tile sensor gains through the 8-bit ADC")
    parser.add_argument("--size", type=int, default=8)
    parser.add_argument("--tile", type=int, default=4)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    rad = rng.uniform(0.1, 0.6, (args.size, args.size))
    tiles = (args.size // args.tile) ** 2
    true_gain = np.linspace(1.1, 1.4, tiles)
    t_of = (np.arange(args.size)[:, None] // args.tile) * (args.size // args.tile) + np.arange(args.size)[None, :] // args.tile
    ref = np.round(np.clip(true_gain[t_of] * rad, 0.0, 1.0) * 255.0) / 255.0
    radiance = wp.array(rad, dtype=wp.float64)
    reference = wp.array(ref, dtype=wp.float64)
    gain = wp.array(np.full(tiles, 1.0), dtype=wp.float64, requires_grad=True)
    w = wp.float64(1.0 / (args.size * args.size))
    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(expose, dim=(args.size, args.size), inputs=[radiance, gain, args.tile, reference, w],
                      outputs=[loss])
        tape.backward(loss)
        wp.launch(gain_step, dim=tiles, inputs=[gain, gain.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 10 == 0:
            print(f"{it}: image mse {loss.numpy()[0]:.3e}  gains {gain.numpy()}")


if __name__ == "__main__":
    main()
