import argparse

import numpy as np
import warp as wp

from soil import bucket_step


@wp.kernel
def probe_error(theta: wp.array(dtype=wp.float64), probe: wp.array2d(dtype=wp.float64), t: int, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = theta[i] - probe[t, i]
    wp.atomic_add(loss, 0, d * d)


def run(ksat, theta0, rain, probe, days, dt):
    n = ksat.shape[0]
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    theta = theta0
    for t in range(days):
        nxt = wp.empty(n, dtype=wp.float64, requires_grad=True)
        wp.launch(bucket_step, dim=n, inputs=[theta, rain, ksat, t, wp.float64(dt)], outputs=[nxt])
        wp.launch(probe_error, dim=n, inputs=[nxt, probe, t], outputs=[loss])
        theta = nxt
    return loss


def synth(sites, days, dt, seed):
    rng = np.random.default_rng(seed)
    rain = 0.4 * rng.gamma(0.6, 1.0, (days, sites)) * (rng.random((days, sites)) < 0.4)
    ksat = rng.uniform(0.5, 3.0, sites)
    th = rng.uniform(0.2, 0.4, sites)
    theta0 = th.copy()
    probe = np.zeros((days, sites))
    for t in range(days):
        th = th + dt * (rain[t] * (1.0 - th) - ksat * th**3)
        probe[t] = th
    probe += rng.normal(0.0, 0.005, probe.shape)
    return theta0, rain, probe


def main():
    ap = argparse.ArgumentParser(description="calibrate saturated drainage of rain-garden sites from moisture probes")
    ap.add_argument("--sites", type=int, default=6)
    ap.add_argument("--days", type=int, default=15)
    ap.add_argument("--dt", type=float, default=0.2)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=2.0)
    ap.add_argument("--momentum", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=404)
    args = ap.parse_args()

    theta0_np, rain_np, probe_np = synth(args.sites, args.days, args.dt, args.seed)
    theta0 = wp.array(theta0_np, dtype=wp.float64, requires_grad=True)
    rain = wp.array(rain_np, dtype=wp.float64)
    probe = wp.array(probe_np, dtype=wp.float64)
    ksat = wp.array(np.full(args.sites, 1.5), dtype=wp.float64, requires_grad=True)
    velocity = np.zeros(args.sites)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = run(ksat, theta0, rain, probe, args.days, args.dt)
        tape.backward(loss)
        velocity = args.momentum * velocity - args.lr * ksat.grad.numpy()
        ksat.assign(np.maximum(ksat.numpy() + velocity, 0.05))
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}")
    print("ksat", np.round(ksat.numpy(), 3))


if __name__ == "__main__":
    main()
