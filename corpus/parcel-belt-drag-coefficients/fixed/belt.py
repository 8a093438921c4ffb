import argparse

import numpy as np
import warp as wp


@wp.struct
class Parcels:
    q: wp.array(dtype=wp.float64)
    qd: wp.array(dtype=wp.float64)


def new_parcels(q, qd):
    s = Parcels()
    s.q = wp.array(q, dtype=wp.float64, requires_grad=True)
    s.qd = wp.array(qd, dtype=wp.float64, requires_grad=True)
    return s


@wp.kernel
def advance(s: Parcels, mu: wp.array(dtype=wp.float64), dt: wp.float64, out: Parcels):
    i = wp.tid()
    v = s.qd[i]
    vn = v - dt * mu[i] * v * v
    out.qd[i] = vn
    out.q[i] = s.q[i] + dt * vn


@wp.kernel
def arrival_error(s: Parcels, scanner: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = s.q[i] - scanner[i]
    wp.atomic_add(loss, 0, d * d)


def run(q0, v0, mu, scanner, steps, dt):
    s = new_parcels(q0, v0)
    for _ in range(steps):
        nxt = new_parcels(q0, v0)
        wp.launch(advance, dim=len(q0), inputs=[s, mu, wp.float64(dt)], outputs=[nxt])
        s = nxt
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(arrival_error, dim=len(q0), inputs=[s, scanner], outputs=[loss])
    return loss


def main():
    ap = argparse.ArgumentParser(description="fit per-parcel sliding drag on a decelerating belt section")
    ap.add_argument("--parcels", type=int, default=7)
    ap.add_argument("--steps", type=int, default=15)
    ap.add_argument("--dt", type=float, default=0.1)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=27)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    q0 = np.zeros(args.parcels)
    v0 = rng.uniform(1.5, 2.5, args.parcels)
    mu_true = rng.uniform(0.1, 0.4, args.parcels)
    q, v = q0.copy(), v0.copy()
    for _ in range(args.steps):
        v = v - args.dt * mu_true * v * v
        q = q + args.dt * v
    scanner = wp.array(q + rng.normal(0.0, 0.01, args.parcels), dtype=wp.float64)
    mu = wp.array(np.full(args.parcels, 0.25), dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = run(q0, v0, mu, scanner, args.steps, args.dt)
        tape.backward(loss)
        mu.assign(mu.numpy() - args.lr * mu.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}")
    print("mu  ", np.round(mu.numpy(), 3))
    print("true", np.round(mu_true, 3))


if __name__ == "__main__":
    main()
