import argparse

import numpy as np
import warp as wp


@wp.kernel
def glide(
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
    drag: wp.float64,
    grip: wp.float64,
    dt: wp.float64,
    pos_out: wp.array(dtype=wp.vec2d),
    vel_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    v = vel[i]
    speed = wp.sqrt(wp.dot(v, v) + wp.float64(0.01))
    curl = wp.vec2d(-v[1], v[0]) * (wp.float64(0.05) / speed)
    a = -drag * v - grip * v / speed + curl
    vn = v + dt * a
    vel_out[i] = vn
    pos_out[i] = pos[i] + dt * vn


@wp.kernel
def house_distance(pos: wp.array(dtype=wp.vec2d), button: wp.array(dtype=wp.vec2d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = pos[i] - button[i]
    wp.atomic_add(out, 0, wp.dot(d, d))


@wp.kernel
def deliver(release: wp.array(dtype=wp.float64), vel: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    speed = release[2 * i]
    angle = release[2 * i + 1]
    vel[i] = wp.vec2d(speed * wp.cos(angle), speed * wp.sin(angle))


@wp.kernel
def coast(release: wp.array(dtype=wp.float64), moment: wp.array(dtype=wp.float64), beta: wp.float64):
    i = wp.tid()
    release[i] = release[i] + beta * moment[i]


@wp.kernel
def push(release: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), moment: wp.array(dtype=wp.float64),
         beta: wp.float64, lr: wp.float64):
    i = wp.tid()
    moment[i] = beta * moment[i] - lr * g[i]
    release[i] = release[i] - lr * g[i]


def throw(release, stones, steps):
    pos = wp.zeros(stones, dtype=wp.vec2d, requires_grad=True)
    vel = wp.zeros(stones, dtype=wp.vec2d, requires_grad=True)
    wp.launch(deliver, dim=stones, inputs=[release], outputs=[vel])
    for _ in range(steps):
        p = wp.zeros(stones, dtype=wp.vec2d, requires_grad=True)
        v = wp.zeros(stones, dtype=wp.vec2d, requires_grad=True)
        wp.launch(glide, dim=stones, inputs=[pos, vel, wp.float64(0.05), wp.float64(0.3), wp.float64(0.1)],
                  outputs=[p, v])
        pos, vel = p, v
    return pos


def main():
    parser = argparse.ArgumentParser(description="find release velocities that put curling stones on their marks")
    parser.add_argument("--stones", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.9)
    args = parser.parse_args()

    button = wp.array([[4.0, 0.5], [5.0, -0.4], [3.5, 0.0]][: args.stones], dtype=wp.vec2d)
    release = wp.array([2.0, 0.0] * args.stones, dtype=wp.float64, requires_grad=True)
    moment = wp.zeros(2 * args.stones, dtype=wp.float64)
    beta = wp.float64(args.beta)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            pos = throw(release, args.stones, args.steps)
            miss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(house_distance, dim=args.stones, inputs=[pos, button], outputs=[miss])
        tape.backward(miss)
        wp.launch(coast, dim=2 * args.stones, inputs=[release, moment, beta])
        wp.launch(push, dim=2 * args.stones, inputs=[release, release.grad, moment, beta, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"end {it:3d}: miss {miss.numpy()[0]:.5f}")
    print(release.numpy().reshape(-1, 2))


if __name__ == "__main__":
    main()
