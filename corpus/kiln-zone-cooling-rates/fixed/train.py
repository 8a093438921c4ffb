import argparse

import numpy as np
import warp as wp


@wp.kernel
def cool_step(
    t_in: wp.array(dtype=wp.float64),
    rate: wp.array(dtype=wp.float64),
    t_amb: wp.float64,
    dt: wp.float64,
    t_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    t = t_in[i]
    d = t - t_amb
    t_out[i] = t - dt * rate[i] * d * (wp.float64(1.0) + wp.float64(0.002) * d)


@wp.kernel
def squared_error(
    t: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    e = (t[i] - measured[i]) / scale
    wp.atomic_add(loss, 0, e * e)


def simulate(t0, rate, steps, dt, t_amb):
    temps = [wp.zeros_like(t0) for _ in range(steps + 1)]
    wp.copy(temps[0], t0)
    for s in range(steps):
        wp.launch(cool_step, dim=len(t0), inputs=[temps[s], rate, t_amb, dt], outputs=[temps[s + 1]])
    return temps[-1]


def make_data(zones, steps, dt, t_amb, seed):
    rng = np.random.default_rng(seed)
    t0 = rng.uniform(900.0, 1100.0, zones)
    true_rate = rng.uniform(0.2, 0.6, zones)
    t = t0.copy()
    for _ in range(steps):
        d = t - t_amb
        t = t - dt * true_rate * d * (1.0 + 0.002 * d)
    measured = t + rng.normal(0.0, 2.0, zones)
    return t0, measured


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--zones", type=int, default=8)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=3)
    args = p.parse_args()

    dt, t_amb = 0.05, 25.0
    t0_np, measured_np = make_data(args.zones, args.steps, dt, t_amb, args.seed)
    t0 = wp.array(t0_np, dtype=wp.float64, requires_grad=True)
    measured = wp.array(measured_np, dtype=wp.float64)
    rate = wp.array(np.full(args.zones, 0.4), dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            t_end = simulate(t0, rate, args.steps, wp.float64(dt), wp.float64(t_amb))
            wp.launch(squared_error, dim=args.zones, inputs=[t_end, measured, wp.float64(10.0)], outputs=[loss])
        tape.backward(loss)
        rate.assign(rate.numpy() - args.lr * rate.grad.numpy())
        tape.zero()
        print(f"iter {it:3d} loss {loss.numpy()[0]:.6f}")

    print("rates", np.round(rate.numpy(), 4))


if __name__ == "__main__":
    main()
