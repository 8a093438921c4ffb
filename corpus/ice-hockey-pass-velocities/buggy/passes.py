import argparse

import numpy as np
import warp as wp


@wp.kernel
def glide(
    x: wp.array(dtype=wp.vec2d),
    v: wp.array(dtype=wp.vec2d),
    drag: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec2d),
    v_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    vi = v[i]
    vn = vi - dt * drag * wp.length(vi) * vi
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def reception_error(x: wp.array(dtype=wp.vec2d), receivers: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - receivers[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def simulate(start, v0, steps, dt, drag):
    x = start
    v = wp.clone(v0)
    for _ in range(steps):
        x_next = wp.zeros_like(v)
        v_next = wp.zeros_like(v)
        wp.launch(glide, dim=v0.shape[0], inputs=[x, v, wp.float64(drag), wp.float64(dt)], outputs=[x_next, v_next])
        x, v = x_next, v_next
    return x


def pass_loss(start, v0, receivers, steps, dt, drag):
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    x = simulate(start, v0, steps, dt, drag)
    wp.launch(reception_error, dim=v0.shape[0], inputs=[x, receivers], outputs=[loss])
    return loss


def drill(passes, seed):
    rng = np.random.default_rng(seed)
    start = rng.uniform(-10.0, 10.0, (passes, 2))
    receivers = start + rng.uniform(5.0, 15.0, (passes, 2)) * rng.choice([-1.0, 1.0], (passes, 2))
    return start, receivers


def main():
    ap = argparse.ArgumentParser(description="pass velocities that reach each receiver after one second")
    ap.add_argument("--passes", type=int, default=6)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dt", type=float, default=0.05)
    ap.add_argument("--drag", type=float, default=0.01)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=88)
    args = ap.parse_args()
    start_np, recv_np = drill(args.passes, args.seed)
    start = wp.array(start_np, dtype=wp.vec2d, requires_grad=True)
    receivers = wp.array(recv_np, dtype=wp.vec2d)
    v0 = wp.array(recv_np - start_np, dtype=wp.vec2d, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = pass_loss(start, v0, receivers, args.steps, args.dt, args.drag)
        tape.backward(loss)
        v0.assign(v0.numpy() - args.lr * v0.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  miss {loss.numpy()[0]:.5f}")
    print(np.round(v0.numpy(), 3))


if __name__ == "__main__":
    main()
