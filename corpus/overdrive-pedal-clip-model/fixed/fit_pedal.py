import argparse

import numpy as np
import warp as wp

from pedal import pedal_output


@wp.kernel
def l2(out: wp.array(dtype=float), rec: wp.array(dtype=float), inv_n: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = out[i] - rec[i]
    wp.atomic_add(loss, 0, d * d * inv_n)


def recording(bands, samples, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(samples) / 48.0
    sig = (0.8 * np.sin(2.0 * np.pi * 0.9 * t) + 0.3 * rng.normal(size=samples)).astype(np.float32)
    band = (np.arange(samples) * bands // samples).astype(np.int32)
    drive = rng.uniform(1.5, 4.0, bands)
    level = rng.uniform(0.5, 1.0, bands)
    x = drive[band] * sig
    rec = level[band] * x / np.sqrt(1.0 + x * x) + 0.1 * sig
    return sig, band, rec.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description="fit drive and level of an overdrive pedal model per band")
    ap.add_argument("--bands", type=int, default=4)
    ap.add_argument("--samples", type=int, default=96)
    ap.add_argument("--iters", type=int, default=80)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=6)
    args = ap.parse_args()

    sig, band, rec = recording(args.bands, args.samples, args.seed)
    signal = wp.array(sig, dtype=float)
    bands = wp.array(band, dtype=int)
    recorded = wp.array(rec, dtype=float)
    drive = wp.array(np.full(args.bands, 2.0, dtype=np.float32), dtype=float, requires_grad=True)
    level = wp.array(np.full(args.bands, 0.7, dtype=np.float32), dtype=float, requires_grad=True)
    out = wp.zeros(args.samples, dtype=float, requires_grad=True)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(pedal_output, dim=args.samples, inputs=[signal, bands, drive, level, 0.1], outputs=[out])
            wp.launch(l2, dim=args.samples, inputs=[out, recorded, 1.0 / args.samples], outputs=[loss])
        tape.backward(loss)
        for p in (drive, level):
            p.assign(p.numpy() - args.lr * p.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}  drive {np.round(drive.numpy(), 3)}")


if __name__ == "__main__":
    main()
