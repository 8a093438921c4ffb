import argparse

import numpy as np
import warp as wp


@wp.kernel
def seed_states(seed: int, states: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    states[i] = wp.rand_init(seed, i)


@wp.kernel
def settle_step(
    depth: wp.array(dtype=wp.float64),
    diameter: wp.array(dtype=wp.float64),
    states: wp.array(dtype=wp.uint32),
    t: int,
    stokes: wp.float64,
    turbulence: wp.float64,
    dt: wp.float64,
    depth_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    rng = states[i]
    n = wp.float64(wp.randf(rng)) - wp.float64(0.5)
    states[i] = rng
    d = diameter[i]
    v = stokes * d * d * (wp.float64(1.0) + turbulence * n)
    depth_out[i] = depth[i] + dt * v


@wp.kernel
def depth_error(depth: wp.array(dtype=wp.float64), core: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    e = depth[i] - core[i]
    wp.atomic_add(loss, 0, e * e)


def rollout(diameter, states, core, steps, seed, dt=0.1, stokes=2.0, turbulence=0.8):
    n = diameter.shape[0]
    wp.launch(seed_states, dim=n, inputs=[seed], outputs=[states])
    depth = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    for t in range(steps):
        nxt = wp.zeros(n, dtype=wp.float64, requires_grad=True)
        wp.launch(settle_step, dim=n, inputs=[depth, diameter, states, t, wp.float64(stokes), wp.float64(turbulence), wp.float64(dt)], outputs=[nxt])
        depth = nxt
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(depth_error, dim=n, inputs=[depth, core], outputs=[loss])
    return loss


def main():
    ap = argparse.ArgumentParser(description="infer grain sizes from where they settled in a sediment column")
    ap.add_argument("--grains", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    core = wp.array(rng.uniform(0.5, 2.5, args.grains), dtype=wp.float64)
    diameter = wp.array(np.full(args.grains, 0.8), dtype=wp.float64, requires_grad=True)
    states = wp.zeros(args.grains, dtype=wp.uint32)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = rollout(diameter, states, core, args.steps, args.seed)
        tape.backward(loss)
        diameter.assign(diameter.numpy() - args.lr * diameter.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}")
    print("diameters", np.round(diameter.numpy(), 4))


if __name__ == "__main__":
    main()
