import argparse

import numpy as np
import warp as wp


@wp.kernel
def string_step(
    y: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    damping: wp.array(dtype=wp.float64),
    tension: wp.float64,
    dt: wp.float64,
    y_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = y.shape[0]
    left = wp.float64(0.0)
    right = wp.float64(0.0)
    if i > 0:
        left = y[i - 1]
    if i < n - 1:
        right = y[i + 1]
    a = tension * (left - wp.float64(2.0) * y[i] + right) - damping[i] * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    y_out[i] = y[i] + dt * vn


@wp.kernel
def pickup_error(y: wp.array(dtype=wp.float64), heard: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = y[i] - heard[i]
    wp.atomic_add(out, 0, d * d)


@wp.kernel
def descend(damping: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    damping[i] = damping[i] - lr * g[i]


def segment(y, v, damping, steps):
    for _ in range(steps):
        yn = wp.zeros_like(y)
        vn = wp.zeros_like(v)
        wp.launch(string_step, dim=y.shape[0], inputs=[y, v, damping, wp.float64(1.0), wp.float64(0.1)],
                  outputs=[yn, vn])
        y, v = yn, vn
    return y, v


def gradient(damping, y0, v0, heard, segments, steps):
    checkpoints = [(y0, v0)]
    for s in range(segments - 1):
        checkpoints.append(segment(checkpoints[-1][0], checkpoints[-1][1], damping, steps))
    n = y0.shape[0]
    seeds = [(wp.zeros(n, dtype=wp.float64), wp.zeros(n, dtype=wp.float64)) for _ in range(segments + 1)]
    err = None
    for s in range(segments):
        ys = wp.clone(checkpoints[s][0], requires_grad=True)
        vs = wp.clone(checkpoints[s][1], requires_grad=True)
        tape = wp.Tape()
        with tape:
            ye, ve = segment(ys, vs, damping, steps)
            if s == segments - 1:
                err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
                wp.launch(pickup_error, dim=n, inputs=[ye, heard], outputs=[err])
        if s == segments - 1:
            tape.backward(err)
        else:
            tape.backward(grads={ye: seeds[s + 1][0], ve: seeds[s + 1][1]})
        wp.copy(seeds[s][0], ys.grad)
        wp.copy(seeds[s][1], vs.grad)
    return err.numpy()[0]


def main():
    parser = argparse.ArgumentParser(description="identify per-node damping of a plucked string, checkpointed rollout")
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--segments", type=int, default=3)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=2.0)
    args = parser.parse_args()

    x = np.linspace(0.0, 1.0, args.nodes + 2)[1:-1]
    y0 = wp.array(np.exp(-30.0 * (x - 0.3) ** 2), dtype=wp.float64)
    v0 = wp.zeros(args.nodes, dtype=wp.float64)
    true = wp.array(np.linspace(0.2, 0.8, args.nodes), dtype=wp.float64)
    heard, _ = segment(y0, v0, true, args.segments * args.steps)
    damping = wp.array(np.full(args.nodes, 0.5), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        e = gradient(damping, y0, v0, heard, args.segments, args.steps)
        wp.launch(descend, dim=args.nodes, inputs=[damping, damping.grad, wp.float64(args.lr)])
        damping.grad.zero_()
        if it % 10 == 0:
            print(f"iter {it}: pickup error {e:.4e}")
    print("damping", damping.numpy())


if __name__ == "__main__":
    main()
