import argparse

import numpy as np
import warp as wp

PROBES = 8


@wp.kernel
def corrected_readings(
    raw: wp.array2d(dtype=wp.float64),
    offset: wp.array2d(dtype=wp.float64),
    reading: wp.array2d(dtype=wp.float64),
):
    i, j = wp.tid()
    reading[i, j] = raw[i, j] + offset[i, j]


@wp.kernel
def pallet_low(reading: wp.array2d(dtype=wp.float64), low: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = wp.tile_load(reading, shape=(1, PROBES), offset=(i, 0))
    m = wp.tile_min(t)
    wp.tile_store(low, m, offset=i)


@wp.kernel
def logger_misfit(
    low: wp.array(dtype=wp.float64),
    logged: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = low[i] - logged[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    ap = argparse.ArgumentParser(description="calibrate cold-store probe offsets against the pallet loggers")
    ap.add_argument("--pallets", type=int, default=4)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    wp.init()
    n = args.pallets
    rng = np.random.default_rng(args.seed)
    true_offset = rng.normal(0.0, 0.3, (n, PROBES))
    raw_np = rng.uniform(2.0, 5.0, (n, PROBES))
    logged_np = (raw_np + true_offset).min(axis=1) + rng.normal(0.0, 0.01, n)

    raw = wp.array(raw_np, dtype=wp.float64)
    logged = wp.array(logged_np, dtype=wp.float64)
    offset = wp.array(np.full((n, PROBES), -0.4), dtype=wp.float64, requires_grad=True)
    reading = wp.zeros((n, PROBES), dtype=wp.float64, requires_grad=True)
    low = wp.zeros(n, dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(corrected_readings, dim=(n, PROBES), inputs=[raw, offset], outputs=[reading])
            wp.launch_tiled(pallet_low, dim=[n], inputs=[reading], outputs=[low], block_dim=PROBES)
            wp.launch(logger_misfit, dim=n, inputs=[low, logged], outputs=[loss])
        tape.backward(loss)
        offset.assign(offset.numpy() - args.lr * offset.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  logger misfit {loss.numpy()[0]:.4e}")
    print("offsets", offset.numpy())


if __name__ == "__main__":
    main()
