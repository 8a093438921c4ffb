import argparse

import numpy as np
import warp as wp

import potential


class IonChain:
    def __init__(self, device="cpu", n_ion=6, n_electrode=4, seed=2):
        rng = np.random.default_rng(seed)
        self.device = device
        self.n_ion = n_ion
        self.n_electrode = n_electrode
        self.electrode_z = wp.array(np.linspace(-2.0, 2.0, n_electrode), dtype=wp.float64, device=device)
        self.electrode_v = wp.array(rng.uniform(0.05, 0.15, n_electrode), dtype=wp.float64, device=device)
        self.soft = 0.05
        z0 = np.linspace(-1.0, 1.0, n_ion) + 0.05 * rng.standard_normal(n_ion)
        self.z = wp.array(z0, dtype=wp.float64, requires_grad=True, device=device)
        self.energy = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def forward(self):
        wp.launch(
            potential.chain_energy,
            dim=1,
            inputs=[self.z, self.n_ion, self.electrode_z, self.electrode_v, self.n_electrode, wp.float64(self.soft)],
            outputs=[self.energy],
            device=self.device,
        )

    def evaluate(self):
        self.forward()
        return float(self.energy.numpy()[0])

    def force(self):
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(loss=self.energy)
        g = self.z.grad.numpy().copy()
        tape.zero()
        return g

    def relax_step(self, lr):
        g = self.force()
        self.z.assign(self.z.numpy() - lr * g)
        return self.evaluate()


def main():
    parser = argparse.ArgumentParser(description="equilibrium spacing of an ion chain in a segmented trap")
    parser.add_argument("--ions", type=int, default=6)
    parser.add_argument("--electrodes", type=int, default=4)
    parser.add_argument("--iters", type=int, default=500)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    chain = IonChain(n_ion=args.ions, n_electrode=args.electrodes)
    for it in range(args.iters):
        e = chain.relax_step(args.lr)
        if it % 100 == 0:
            print(f"{it:4d} energy {e:.8f}")
    print("positions", np.sort(chain.z.numpy()))


if __name__ == "__main__":
    main()
