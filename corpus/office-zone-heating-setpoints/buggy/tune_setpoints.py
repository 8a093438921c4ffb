import argparse

import numpy as np
import warp as wp


@wp.kernel
def zone_day(
    occupied: wp.array(dtype=wp.float64),
    setback: wp.array(dtype=wp.float64),
    outdoor: wp.array(dtype=wp.float64),
    ua: wp.array(dtype=wp.float64),
    schedule_on: bool,
    comfort: wp.float64,
    price: wp.float64,
    cost: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    sp = occupied[i] if schedule_on else setback[i]
    heat = ua[i] * (sp - outdoor[i])
    discomfort = sp - comfort
    wp.atomic_add(cost, 0, price * heat * heat + discomfort * discomfort)


def daily_cost(occupied, setback, outdoor, ua, schedule_on, comfort=21.0, price=0.002):
    cost = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(zone_day, dim=occupied.shape[0], inputs=[occupied, setback, outdoor, ua, schedule_on, wp.float64(comfort), wp.float64(price)], outputs=[cost])
    return cost


def main():
    ap = argparse.ArgumentParser(description="tune occupied-hours heating setpoints per office zone")
    ap.add_argument("--zones", type=int, default=8)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=15)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    outdoor = wp.array(rng.uniform(-5.0, 8.0, args.zones), dtype=wp.float64)
    ua = wp.array(rng.uniform(0.5, 2.0, args.zones), dtype=wp.float64)
    occupied = wp.array(np.full(args.zones, 22.0), dtype=wp.float64, requires_grad=True)
    setback = wp.array(np.full(args.zones, 16.0), dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            cost = daily_cost(occupied, setback, outdoor, ua, True)
        tape.backward(cost)
        occupied.assign(occupied.numpy() - args.lr * occupied.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  cost {cost.numpy()[0]:.4f}")
    print("setpoints", np.round(occupied.numpy(), 2))


if __name__ == "__main__":
    main()
