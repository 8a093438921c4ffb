import argparse

import numpy as np
import warp as wp

import pvstring


class StringFit:
    def __init__(self, device="cpu", n_strings=4, seed=12):
        rng = np.random.default_rng(seed)
        self.device = device
        self.n_strings = n_strings
        self.cutoff = 0.35
        self.derate = 0.08
        irr = rng.uniform(0.6, 1.0, (n_strings, 4))
        shaded = rng.random((n_strings, 4)) < 0.3
        irr[shaded] = rng.uniform(0.1, 0.3, shaded.sum())
        true_eff = rng.uniform(0.17, 0.22, n_strings * 4)
        e = true_eff.reshape(n_strings, 4) * irr
        power = (e - np.where(irr < self.cutoff, 0.0, self.derate * e * e)).sum(axis=1)
        self.irradiance = wp.array(irr, dtype=wp.float64, device=device)
        self.measured = wp.array(power + 0.001 * rng.standard_normal(n_strings), dtype=wp.float64, device=device)
        self.eff = wp.array(np.full(n_strings * 4, 0.2), dtype=wp.float64, requires_grad=True, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def forward(self):
        self.loss.zero_()
        wp.launch(
            pvstring.string_power,
            dim=self.n_strings,
            inputs=[self.eff, self.irradiance, wp.float64(self.cutoff), wp.float64(self.derate), self.measured],
            outputs=[self.loss],
            device=self.device,
        )

    def evaluate(self):
        self.forward()
        return float(self.loss.numpy()[0])

    def grad(self):
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(loss=self.loss)
        g = self.eff.grad.numpy().copy()
        tape.zero()
        return g

    def step(self, lr):
        self.eff.assign(self.eff.numpy() - lr * self.grad())
        return self.evaluate()


def main():
    parser = argparse.ArgumentParser(description="fit per-panel efficiencies of PV strings from string power logs")
    parser.add_argument("--strings", type=int, default=4)
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()
    fit = StringFit(n_strings=args.strings)
    for it in range(args.iters):
        loss = fit.step(args.lr)
        if it % 50 == 0:
            print(f"{it:4d} {loss:.6e}")
    print("efficiencies", fit.eff.numpy().reshape(-1, 4))


if __name__ == "__main__":
    main()
