import argparse

import numpy as np
import warp as wp

from ocv_model import voltage_residuals


def load_cells(cells, samples, seed):
    rng = np.random.default_rng(seed)
    soc = np.tile(np.linspace(0.05, 0.95, samples), cells)
    true = np.stack([
        rng.uniform(3.55, 3.7, cells),
        rng.uniform(0.45, 0.6, cells),
        rng.uniform(0.04, 0.08, cells),
        rng.uniform(0.02, 0.05, cells),
    ], axis=1)
    c = np.repeat(true, samples, axis=0)
    volts = c[:, 0] + c[:, 1] * soc + c[:, 2] * np.log(soc) - c[:, 3] * np.log(1.0 - soc)
    volts += rng.normal(0.0, 0.002, volts.shape)
    return soc, volts


def evaluate(coef, soc, volts, samples):
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    n = soc.shape[0]
    wp.launch(voltage_residuals, dim=n, inputs=[coef, soc, volts, samples, wp.float64(1.0 / n)], outputs=[loss])
    return loss


def fit_step(coef, soc, volts, samples, lr):
    tape = wp.Tape()
    with tape:
        loss = evaluate(coef, soc, volts, samples)
    tape.backward(loss)
    coef.assign(coef.numpy() - lr * coef.grad.numpy())
    tape.zero()
    return loss.numpy()[0]


def main():
    parser = argparse.ArgumentParser(description="fit open-circuit-voltage curves of a battery pack")
    parser.add_argument("--cells", type=int, default=4)
    parser.add_argument("--samples", type=int, default=12)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    soc_np, volts_np = load_cells(args.cells, args.samples, args.seed)
    soc = wp.array(soc_np, dtype=wp.float64)
    volts = wp.array(volts_np, dtype=wp.float64)
    coef = wp.array(np.tile([3.6, 0.5, 0.05, 0.03], args.cells), dtype=wp.float64, requires_grad=True)

    for it in range(args.iterations):
        loss = fit_step(coef, soc, volts, args.samples, args.lr)
        if it % 5 == 0:
            print(f"it {it:4d}  mse {loss:.3e}")
    print(coef.numpy().reshape(args.cells, 4))


if __name__ == "__main__":
    main()
