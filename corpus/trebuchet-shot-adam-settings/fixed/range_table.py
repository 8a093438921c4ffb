import argparse

import numpy as np
import warp as wp
import warp.optim


@wp.kernel
def release(setting: wp.array(dtype=wp.float32), pos: wp.array(dtype=wp.vec2), vel: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    speed = setting[2 * i]
    angle = setting[2 * i + 1]
    pos[i] = wp.vec2(0.0, 2.0)
    vel[i] = wp.vec2(speed * wp.cos(angle), speed * wp.sin(angle))


@wp.kernel
def flight(pos: wp.array(dtype=wp.vec2), vel: wp.array(dtype=wp.vec2), drag: float, dt: float,
           pos_out: wp.array(dtype=wp.vec2), vel_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    v = vel[i]
    a = wp.vec2(0.0, -9.81) - drag * wp.length(v) * v
    vn = v + dt * a
    vel_out[i] = vn
    pos_out[i] = pos[i] + dt * vn


@wp.kernel
def target_miss(pos: wp.array(dtype=wp.vec2), target: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    d = pos[i] - target[i]
    wp.atomic_add(out, 0, wp.dot(d, d))


def shoot(setting, shots, steps, dt):
    pos = wp.zeros(shots, dtype=wp.vec2, requires_grad=True)
    vel = wp.zeros(shots, dtype=wp.vec2, requires_grad=True)
    wp.launch(release, dim=shots, inputs=[setting], outputs=[pos, vel])
    for _ in range(steps):
        p = wp.zeros(shots, dtype=wp.vec2, requires_grad=True)
        v = wp.zeros(shots, dtype=wp.vec2, requires_grad=True)
        wp.launch(flight, dim=shots, inputs=[pos, vel, 0.01, dt], outputs=[p, v])
        pos, vel = p, v
    return pos


def main():
    parser = argparse.ArgumentParser(description="build a trebuchet range table: speed and angle per target")
    parser.add_argument("--shots", type=int, default=3)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--dt", type=float, default=0.05)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    target = wp.array([[18.0, 1.0], [22.0, 3.0], [15.0, 4.0]][: args.shots], dtype=wp.vec2)
    setting = wp.array([16.0, 0.6] * args.shots, dtype=wp.float32, requires_grad=True)
    opt = warp.optim.Adam([setting], lr=args.lr)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            pos = shoot(setting, args.shots, args.steps, args.dt)
            miss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
            wp.launch(target_miss, dim=args.shots, inputs=[pos, target], outputs=[miss])
        tape.backward(miss)
        opt.step([setting.grad])
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it}: miss {miss.numpy()[0]:.4f}")
    print(setting.numpy().reshape(-1, 2))


if __name__ == "__main__":
    main()
