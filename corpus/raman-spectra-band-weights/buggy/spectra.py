import argparse

import numpy as np
import warp as wp


@wp.func
def normalise(spec: wp.array2d(dtype=wp.float64), k: int, b: int, total: wp.float64):
    spec[k, b] /= total


@wp.kernel
def mix_bands(
    weights: wp.array2d(dtype=wp.float64),
    library: wp.array2d(dtype=wp.float64),
    spec: wp.array2d(dtype=wp.float64),
):
    k, b = wp.tid()
    acc = wp.float64(0.0)
    total = wp.float64(0.0)
    for c in range(3):
        acc += weights[k, c] * library[c, b]
        total += weights[k, c]
    spec[k, b] = acc
    normalise(spec, k, b, total)


@wp.kernel
def spectral_misfit(spec: wp.array2d(dtype=wp.float64), measured: wp.array2d(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    k, b = wp.tid()
    d = spec[k, b] - measured[k, b]
    wp.atomic_add(loss, 0, d * d)


def unmix_loss(weights, library, measured):
    shape = measured.shape
    spec = wp.zeros(shape, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(mix_bands, dim=shape, inputs=[weights, library], outputs=[spec])
    wp.launch(spectral_misfit, dim=shape, inputs=[spec, measured], outputs=[loss])
    return loss


def samples(count, bands, seed):
    rng = np.random.default_rng(seed)
    x = np.linspace(0.0, 1.0, bands)
    centers = [0.2, 0.5, 0.75]
    library = np.stack([np.exp(-((x - c) / 0.06) ** 2) for c in centers])
    w = rng.dirichlet([2.0, 2.0, 2.0], count) * rng.uniform(0.5, 2.0, (count, 1))
    measured = (w @ library) / w.sum(1, keepdims=True) + rng.normal(0.0, 0.005, (count, bands))
    return library, measured


def main():
    ap = argparse.ArgumentParser(description="unmix Raman spectra into three reference compounds")
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--bands", type=int, default=24)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=33)
    args = ap.parse_args()
    lib_np, meas_np = samples(args.samples, args.bands, args.seed)
    library = wp.array(lib_np, dtype=wp.float64)
    measured = wp.array(meas_np, dtype=wp.float64)
    weights = wp.array(np.full((args.samples, 3), 1.0), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = unmix_loss(weights, library, measured)
        tape.backward(loss)
        weights.assign(weights.numpy() - args.lr * weights.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  misfit {loss.numpy()[0]:.6f}")
    w = weights.numpy()
    print("fractions", np.round(w / w.sum(1, keepdims=True), 3))


if __name__ == "__main__":
    main()
