import argparse

import numpy as np
import warp as wp

BANDS = 8


@wp.kernel
def band_levels(
    gain: wp.array2d(dtype=wp.float64),
    response: wp.array2d(dtype=wp.float64),
    level: wp.array2d(dtype=wp.float64),
):
    i, j = wp.tid()
    level[i, j] = gain[i, j] * response[i, j]


@wp.kernel
def speaker_peak(level: wp.array2d(dtype=wp.float64), peak: wp.array(dtype=wp.float64)):
    i = wp.tid()
    m = level[i, 0]
    for j in range(1, BANDS):
        m = wp.max(m, level[i, j])
    peak[i] = m


@wp.kernel
def meter_misfit(
    peak: wp.array(dtype=wp.float64),
    metered: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = peak[i] - metered[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    ap = argparse.ArgumentParser(description="tune per-band gains of the stage speakers to the peak-hold meter")
    ap.add_argument("--speakers", type=int, default=6)
    ap.add_argument("--iters", type=int, default=80)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=23)
    args = ap.parse_args()
    wp.init()
    n = args.speakers
    rng = np.random.default_rng(args.seed)
    response_np = rng.uniform(0.4, 1.2, (n, BANDS))
    gain_true = rng.uniform(0.7, 1.3, (n, BANDS))
    metered_np = (gain_true * response_np).max(axis=1)

    response = wp.array(response_np, dtype=wp.float64)
    metered = wp.array(metered_np, dtype=wp.float64)
    gain = wp.array(np.ones((n, BANDS)), dtype=wp.float64, requires_grad=True)
    level = wp.zeros((n, BANDS), dtype=wp.float64, requires_grad=True)
    peak = wp.zeros(n, dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(band_levels, dim=(n, BANDS), inputs=[gain, response], outputs=[level])
            wp.launch(speaker_peak, dim=n, inputs=[level], outputs=[peak])
            wp.launch(meter_misfit, dim=n, inputs=[peak, metered], outputs=[loss])
        tape.backward(loss)
        gain.assign(gain.numpy() - args.lr * gain.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  peak misfit {loss.numpy()[0]:.4e}")
    print("band gains", gain.numpy())


if __name__ == "__main__":
    main()
