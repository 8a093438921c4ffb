import argparse

import numpy as np
import warp as wp


@wp.kernel
def wave_step(
    u: wp.array(dtype=wp.float64),
    u_prev: wp.array(dtype=wp.float64),
    amp: wp.array(dtype=wp.float64),
    omega: wp.array(dtype=wp.float64),
    time: wp.float64,
    courant2: wp.float64,
    damping: wp.float64,
    u_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = u.shape[0]
    left = wp.float64(0.0)
    if i > 0:
        left = u[i - 1]
    else:
        for k in range(3):
            left += amp[k] * wp.sin(omega[k] * time)
    right = u[n - 1]
    if i < n - 1:
        right = u[i + 1]
    lap = left - wp.float64(2.0) * u[i] + right
    u_next[i] = (wp.float64(2.0) * u[i] - (wp.float64(1.0) - damping) * u_prev[i] + courant2 * lap) / (
        wp.float64(1.0) + damping)


@wp.kernel
def gauge_error(u: wp.array(dtype=wp.float64), wanted: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = u[i] - wanted[i]
    wp.atomic_add(out, 0, d * d)


@wp.kernel
def paddle_update(amp: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    k = wp.tid()
    amp[k] = amp[k] - lr * g[k]


class Flume:
    def __init__(self, cells, steps, dt=0.1):
        self.cells = cells
        self.steps = steps
        self.dt = dt
        self.omega = wp.array([0.8, 1.3, 2.1], dtype=wp.float64)

    def advance(self, u, u_prev, amp, first, count):
        for k in range(first, first + count):
            u_next = wp.zeros(self.cells, dtype=wp.float64, requires_grad=True)
            wp.launch(wave_step, dim=self.cells,
                      inputs=[u, u_prev, amp, self.omega, wp.float64(k * self.dt), wp.float64(0.5), wp.float64(0.02)],
                      outputs=[u_next])
            u_prev, u = u, u_next
        return u, u_prev


def train_step(flume, amp, wanted, segments):
    per = flume.steps // segments
    marks = [(wp.zeros(flume.cells, dtype=wp.float64), wp.zeros(flume.cells, dtype=wp.float64))]
    for s in range(segments - 1):
        u, up = flume.advance(marks[-1][0], marks[-1][1], amp, s * per, per)
        marks.append((wp.clone(u), wp.clone(up)))
    seed = None
    err = None
    for s in reversed(range(segments)):
        u0 = wp.clone(marks[s][0], requires_grad=True)
        up0 = wp.clone(marks[s][1], requires_grad=True)
        tape = wp.Tape()
        with tape:
            u, up = flume.advance(u0, up0, amp, s * per, per)
            if s == segments - 1:
                err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
                wp.launch(gauge_error, dim=flume.cells, inputs=[u, wanted], outputs=[err])
        if s == segments - 1:
            tape.backward(err)
        else:
            tape.backward(grads={u: seed[0], up: seed[1]})
        seed = (wp.clone(u0.grad), wp.clone(up0.grad))
    return err.numpy()[0]


def main():
    parser = argparse.ArgumentParser(description="fit wave-flume paddle amplitudes to gauge readings (checkpointed)")
    parser.add_argument("--cells", type=int, default=12)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--segments", type=int, default=3)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    flume = Flume(args.cells, args.steps)
    truth = wp.array([0.3, -0.2, 0.15], dtype=wp.float64)
    u, _ = flume.advance(wp.zeros(args.cells, dtype=wp.float64), wp.zeros(args.cells, dtype=wp.float64), truth, 0,
                         args.steps)
    wanted = wp.clone(u)
    amp = wp.array([0.1, 0.1, 0.1], dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        e = train_step(flume, amp, wanted, args.segments)
        wp.launch(paddle_update, dim=3, inputs=[amp, amp.grad, wp.float64(args.lr)])
        amp.grad.zero_()
        if it % 5 == 0:
            print(f"{it:3d}: gauge error {e:.6e}")
    print("amplitudes", amp.numpy())


if __name__ == "__main__":
    main()
