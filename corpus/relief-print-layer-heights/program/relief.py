import argparse

import numpy as np
import warp as wp


@wp.func
def sliced(h: wp.float64, layer: wp.float64):
    return wp.round(h / layer) * layer


@wp.kernel
def print_relief(
    height: wp.array2d(dtype=wp.float64),
    layer: wp.float64,
    design: wp.array2d(dtype=wp.float64),
    shrink: wp.float64,
    err: wp.array(dtype=wp.float64),
):
    i, j = wp.tid()
    printed = sliced(height[i, j], layer) * (wp.float64(1.0) - shrink)
    d = printed - design[i, j]
    wp.atomic_add(err, 0, d * d)


@wp.kernel
def smoothness(height: wp.array2d(dtype=wp.float64), weight: wp.float64, err: wp.array(dtype=wp.float64)):
    i, j = wp.tid()
    if i + 1 < height.shape[0]:
        d = height[i + 1, j] - height[i, j]
        wp.atomic_add(err, 0, weight * d * d)
    if j + 1 < height.shape[1]:
        d = height[i, j + 1] - height[i, j]
        wp.atomic_add(err, 0, weight * d * d)


@wp.kernel
def lower(height: wp.array2d(dtype=wp.float64), g: wp.array2d(dtype=wp.float64), lr: wp.float64):
    i, j = wp.tid()
    height[i, j] = height[i, j] - lr * g[i, j]


def main():
    parser = argparse.ArgumentParser(description="pre-compensate a relief height map for layer slicing and shrink")
    parser.add_argument("--size", type=int, default=5)
    parser.add_argument("--layer", type=float, default=0.2)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    yy, xx = np.mgrid[0 : args.size, 0 : args.size] / (args.size - 1.0)
    design_np = 1.0 + 1.5 * np.exp(-((xx - 0.5) ** 2 + (yy - 0.4) ** 2) / 0.1)
    design = wp.array(design_np, dtype=wp.float64)
    height = wp.array(design_np + 0.037, dtype=wp.float64, requires_grad=True)
    shape = (args.size, args.size)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(print_relief, dim=shape, inputs=[height, wp.float64(args.layer), design, wp.float64(0.02)],
                      outputs=[err])
            wp.launch(smoothness, dim=shape, inputs=[height, wp.float64(0.05)], outputs=[err])
        tape.backward(err)
        wp.launch(lower, dim=shape, inputs=[height, height.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"{it}: print error {err.numpy()[0]:.5f}")


if __name__ == "__main__":
    main()
