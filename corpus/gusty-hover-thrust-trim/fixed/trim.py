import argparse

import numpy as np
import warp as wp

STEPS = wp.constant(15)


@wp.kernel
def hover_rollout(
    trim: wp.array(dtype=wp.float64),
    mass: wp.array(dtype=wp.float64),
    seed: int,
    samples: int,
    dt: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    tid = wp.tid()
    d = tid // samples
    rng = wp.rand_init(seed, tid)
    z = wp.float64(0.0)
    vz = wp.float64(0.0)
    for s in range(STEPS):
        gust = wp.float64(0.8) * (wp.float64(wp.randf(rng)) - wp.float64(0.5))
        az = trim[d] / mass[d] - wp.float64(9.81) + gust - wp.float64(0.3) * vz
        vz = vz + dt * az
        z = z + dt * vz
    wp.atomic_add(loss, 0, z * z / wp.float64(samples))


def expected_drift(trim, mass, seed, samples, dt=0.05):
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(hover_rollout, dim=trim.shape[0] * samples, inputs=[trim, mass, seed, samples, wp.float64(dt)], outputs=[loss])
    return loss


def main():
    ap = argparse.ArgumentParser(description="trim thrust so each drone holds altitude in random gusts")
    ap.add_argument("--drones", type=int, default=4)
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=100)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    mass = wp.array(rng.uniform(1.0, 2.0, args.drones), dtype=wp.float64)
    trim = wp.array(mass.numpy() * 9.0, dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = expected_drift(trim, mass, args.seed, args.samples)
        tape.backward(loss)
        trim.assign(trim.numpy() - args.lr * trim.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  drift {loss.numpy()[0]:.6f}")
    print("trim / (m g)", np.round(trim.numpy() / (mass.numpy() * 9.81), 4))


if __name__ == "__main__":
    main()
