import argparse

import numpy as np
import warp as wp


@wp.kernel
def fly(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    anchor: wp.array(dtype=wp.float64),
    offset: wp.array(dtype=wp.float64),
    kp: wp.float64,
    kd: wp.float64,
    drag: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    a = kp * (anchor[i] + offset[i] - x[i]) - kd * v[i] - drag * wp.abs(v[i]) * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def pattern_error(x: wp.array(dtype=wp.float64), pattern: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - pattern[i]
    wp.atomic_add(out, 0, d * d)


@wp.kernel
def retarget(offset: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64,
             offset_next: wp.array(dtype=wp.float64)):
    i = wp.tid()
    offset_next[i] = offset[i] - lr * g[i]


def rollout(offset, anchor, steps):
    n = offset.shape[0]
    x = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    v = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    for _ in range(steps):
        xn = wp.zeros(n, dtype=wp.float64, requires_grad=True)
        vn = wp.zeros(n, dtype=wp.float64, requires_grad=True)
        wp.launch(fly, dim=n, inputs=[x, v, anchor, offset, wp.float64(4.0), wp.float64(1.5), wp.float64(0.6),
                                      wp.float64(0.05)], outputs=[xn, vn])
        x, v = xn, vn
    return x


def main():
    parser = argparse.ArgumentParser(description="tune formation offsets so a drone show hits its pattern on cue")
    parser.add_argument("--drones", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.2)
    args = parser.parse_args()

    n = 2 * args.drones
    ang = np.linspace(0.0, 2.0 * np.pi, args.drones, endpoint=False)
    pattern = wp.array(np.stack([np.cos(ang), np.sin(ang)], 1).reshape(-1), dtype=wp.float64)
    anchor = wp.array(np.tile([0.2, -0.1], args.drones), dtype=wp.float64)
    offset = wp.array(np.stack([np.cos(ang), np.sin(ang)], 1).reshape(-1) * 0.5, dtype=wp.float64, requires_grad=True)
    offset_next = wp.zeros_like(offset)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            x = rollout(offset, anchor, args.steps)
            err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(pattern_error, dim=n, inputs=[x, pattern], outputs=[err])
        tape.backward(err)
        wp.launch(retarget, dim=n, inputs=[offset, offset.grad, wp.float64(args.lr)], outputs=[offset_next])
        offset.grad.zero_()
        offset, offset_next = offset_next, offset
        print(f"cue {it:2d}: pattern error {err.numpy()[0]:.6f}")
    print(offset.numpy().reshape(-1, 2))


if __name__ == "__main__":
    main()
