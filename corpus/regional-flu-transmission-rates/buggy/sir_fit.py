import argparse

import numpy as np
import warp as wp


@wp.kernel
def sir_day(
    s: wp.array(dtype=wp.float64),
    inf: wp.array(dtype=wp.float64),
    beta: wp.array(dtype=wp.float64),
    gamma: wp.float64,
    s_out: wp.array(dtype=wp.float64),
    inf_out: wp.array(dtype=wp.float64),
):
    r = wp.tid()
    new_cases = beta[r] * s[r] * inf[r]
    s_out[r] = s[r] - new_cases
    inf_out[r] = inf[r] + new_cases - gamma * inf[r]


@wp.kernel
def case_error(inf: wp.array(dtype=wp.float64), reported: wp.array2d(dtype=wp.float64), day: int, loss: wp.array(dtype=wp.float64)):
    r = wp.tid()
    d = wp.float64(100.0) * (inf[r] - reported[day, r])
    wp.atomic_add(loss, 0, d * d)


def season_loss(beta, s0, i0, reported, days, gamma):
    n = beta.shape[0]
    s = wp.array(s0, dtype=wp.float64, requires_grad=True)
    inf = wp.array(i0, dtype=wp.float64, requires_grad=True)
    s_next = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    inf_next = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    for day in range(days):
        wp.launch(sir_day, dim=n, inputs=[s, inf, beta, wp.float64(gamma)], outputs=[s_next, inf_next])
        wp.launch(case_error, dim=n, inputs=[inf_next, reported, day], outputs=[loss])
        wp.copy(s, s_next)
        wp.copy(inf, inf_next)
    return loss


def simulate_truth(regions, days, gamma, seed):
    rng = np.random.default_rng(seed)
    beta = rng.uniform(0.25, 0.45, regions)
    s = np.full(regions, 0.99)
    i = rng.uniform(0.005, 0.02, regions)
    s0, i0 = s.copy(), i.copy()
    out = []
    for _ in range(days):
        new = beta * s * i
        s, i = s - new, i + new - gamma * i
        out.append(i.copy())
    reported = np.array(out) * rng.lognormal(0.0, 0.05, (days, regions))
    return s0, i0, reported


def main():
    ap = argparse.ArgumentParser(description="fit regional transmission rates of a flu season")
    ap.add_argument("--regions", type=int, default=6)
    ap.add_argument("--days", type=int, default=20)
    ap.add_argument("--gamma", type=float, default=0.2)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=2e-6)
    ap.add_argument("--seed", type=int, default=1918)
    args = ap.parse_args()
    s0, i0, rep = simulate_truth(args.regions, args.days, args.gamma, args.seed)
    reported = wp.array(rep, dtype=wp.float64)
    beta = wp.array(np.full(args.regions, 0.3), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = season_loss(beta, s0, i0, reported, args.days, args.gamma)
        tape.backward(loss)
        beta.assign(beta.numpy() - args.lr * beta.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.5f}")
    print("beta", np.round(beta.numpy(), 4))


if __name__ == "__main__":
    main()
