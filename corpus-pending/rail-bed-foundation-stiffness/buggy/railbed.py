import argparse

import numpy as np
import warp as wp


@wp.kernel
def ballast_load(bed: wp.array(dtype=wp.float64), axle: wp.array(dtype=wp.float64), density: wp.float64,
                 f: wp.array(dtype=wp.float64)):
    i = wp.tid()
    f[i] = axle[i] + density * bed[i]


@wp.kernel
def bed_energy(
    u: wp.array(dtype=wp.float64),
    bed: wp.array(dtype=wp.float64),
    f: wp.array(dtype=wp.float64),
    rail: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = u.shape[0]
    e = wp.float64(0.5) * bed[i] * u[i] * u[i] + wp.float64(0.125) * u[i] * u[i] * u[i] * u[i] - f[i] * u[i]
    if i < n - 1:
        d = u[i + 1] - u[i]
        e += wp.float64(0.5) * rail * d * d
    wp.atomic_add(out, 0, e)


@wp.kernel
def relax(u: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), step: wp.float64):
    i = wp.tid()
    u[i] = u[i] - step * g[i]


@wp.kernel
def design_cost(energy: wp.array(dtype=wp.float64), bed: wp.array(dtype=wp.float64), nominal: wp.float64,
                price: wp.float64, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if i == 0:
        wp.atomic_add(out, 0, wp.float64(-2.0) * energy[0])
    d = bed[i] - nominal
    wp.atomic_add(out, 0, price * d * d)


@wp.kernel
def redesign(bed: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    bed[i] = bed[i] - lr * g[i]


class Track:
    def __init__(self, sleepers, sweeps):
        self.n = sleepers
        self.sweeps = sweeps
        self.rail = wp.float64(0.3)
        self.density = wp.float64(0.1)
        self.axle = wp.array(np.where(np.arange(sleepers) % 3 == 1, 1.0, 0.2), dtype=wp.float64)
        self.u = wp.zeros(sleepers, dtype=wp.float64, requires_grad=True)
        self.f = wp.zeros(sleepers, dtype=wp.float64, requires_grad=True)

    def loads(self, bed):
        wp.launch(ballast_load, dim=self.n, inputs=[bed, self.axle, self.density], outputs=[self.f])

    def energy(self, bed):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(bed_energy, dim=self.n, inputs=[self.u, bed, self.f, self.rail], outputs=[out])
        return out

    def settle(self, bed):
        for _ in range(self.sweeps):
            tape = wp.Tape()
            with tape:
                e = self.energy(bed)
            tape.backward(e)
            wp.launch(relax, dim=self.n, inputs=[self.u, self.u.grad, wp.float64(0.25)])
            tape.zero()


def main():
    parser = argparse.ArgumentParser(description="choose ballast bed stiffness under a rail for least compliance")
    parser.add_argument("--sleepers", type=int, default=9)
    parser.add_argument("--sweeps", type=int, default=80)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    track = Track(args.sleepers, args.sweeps)
    bed = wp.array(np.full(args.sleepers, 2.0), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        track.loads(bed)
        track.settle(bed)
        tape = wp.Tape()
        with tape:
            e = track.energy(bed)
            cost = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(design_cost, dim=args.sleepers, inputs=[e, bed, wp.float64(2.0), wp.float64(0.05)],
                      outputs=[cost])
        tape.backward(cost)
        wp.launch(redesign, dim=args.sleepers, inputs=[bed, bed.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"it {it}: cost {cost.numpy()[0]:.6f}")
    print("bed stiffness", bed.numpy())


if __name__ == "__main__":
    main()
