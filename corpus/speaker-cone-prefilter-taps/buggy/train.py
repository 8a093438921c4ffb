import argparse

import numpy as np
import warp as wp

from dsp import excursion_error, play, prefilter


@wp.kernel
def sgd(w: wp.array(dtype=wp.float64), dw: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    w[i] = w[i] - lr * dw[i]


def test_tones(batch, samples):
    t = np.arange(samples)
    return np.stack([np.sin(0.15 * (b + 1) * t) for b in range(batch)])


def main():
    parser = argparse.ArgumentParser(description="fit FIR pre-emphasis taps so the cone follows a reference")
    parser.add_argument("--taps", type=int, default=6)
    parser.add_argument("--tones", type=int, default=3)
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--iters", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.3)
    args = parser.parse_args()

    sig = wp.array(test_tones(args.tones, args.samples), dtype=wp.float64)
    goal_taps = wp.array(np.linspace(1.2, -0.3, args.taps), dtype=wp.float64)
    ref = play(prefilter(goal_taps, sig), args.samples)
    taps = wp.array(np.eye(1, args.taps)[0], dtype=wp.float64, requires_grad=True)
    w = wp.float64(1.0 / (args.tones * (args.samples + 1)))

    for it in range(args.iters):
        drive = prefilter(taps, sig)
        tape = wp.Tape()
        with tape:
            pos = play(drive, args.samples)
            err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(excursion_error, dim=pos.shape, inputs=[pos, ref, w], outputs=[err])
        tape.backward(err)
        wp.launch(sgd, dim=args.taps, inputs=[taps, taps.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 10 == 0:
            print(f"it {it}: error {err.numpy()[0]:.4e}")
    print("taps", taps.numpy())


if __name__ == "__main__":
    main()
