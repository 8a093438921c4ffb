import argparse
import math

import numpy as np
import warp as wp


@wp.kernel
def drift(p: wp.array(dtype=wp.vec2d), speed: wp.float64, dt: wp.float64, p_out: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    x = p[i]
    pi = wp.float64(math.pi)
    u = wp.vec2d(-wp.sin(pi * x[0]) * wp.cos(pi * x[1]), wp.cos(pi * x[0]) * wp.sin(pi * x[1]))
    p_out[i] = x + dt * speed * u


@wp.kernel
def copy_points(src: wp.array(dtype=wp.vec2d), dst: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    dst[i] = src[i]


@wp.kernel
def surfacing_error(p: wp.array(dtype=wp.vec2d), target: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = p[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


@wp.kernel
def stay_near_ship(p0: wp.array(dtype=wp.vec2d), ship: wp.array(dtype=wp.vec2d), weight: wp.float64, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = p0[i] - ship[i]
    wp.atomic_add(loss, 0, weight * wp.dot(d, d))


def mission_loss(p0, ship, target, steps, dt, speed, weight):
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    start = wp.zeros_like(p0)
    wp.launch(copy_points, dim=p0.shape[0], inputs=[p0], outputs=[start])
    states = [start]
    for _ in range(steps):
        nxt = wp.zeros_like(p0)
        wp.launch(drift, dim=p0.shape[0], inputs=[states[-1], wp.float64(speed), wp.float64(dt)], outputs=[nxt])
        states.append(nxt)
    wp.launch(surfacing_error, dim=p0.shape[0], inputs=[states[-1], target], outputs=[loss])
    wp.launch(stay_near_ship, dim=p0.shape[0], inputs=[p0, ship, wp.float64(weight)], outputs=[loss])
    return loss


def main():
    ap = argparse.ArgumentParser(description="plan glider deployment points so they surface at the survey stations")
    ap.add_argument("--gliders", type=int, default=6)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--dt", type=float, default=0.05)
    ap.add_argument("--speed", type=float, default=1.0)
    ap.add_argument("--weight", type=float, default=0.5)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    ship_np = rng.uniform(0.1, 0.9, (args.gliders, 2))
    target = wp.array(ship_np + rng.normal(0.0, 0.08, ship_np.shape), dtype=wp.vec2d)
    ship = wp.array(ship_np, dtype=wp.vec2d)
    p0 = wp.array(ship_np + rng.normal(0.0, 0.05, ship_np.shape), dtype=wp.vec2d, requires_grad=True)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = mission_loss(p0, ship, target, args.steps, args.dt, args.speed, args.weight)
        tape.backward(loss)
        p0.assign(p0.numpy() - args.lr * p0.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}")
    np.savetxt("deployment_points.csv", p0.numpy(), delimiter=",")


if __name__ == "__main__":
    main()
