import argparse

import numpy as np
import warp as wp


@wp.kernel
def heater_source(
    amp: wp.array(dtype=wp.float64),
    centers: wp.array(dtype=wp.float64),
    width: wp.float64,
    nbasis: int,
    q: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    x = wp.float64(i) + wp.float64(0.5)
    s = wp.float64(0.0)
    for j in range(nbasis):
        d = (x - centers[j]) / width
        s += amp[j] * wp.exp(-d * d)
    q[i] = s


@wp.kernel
def diffuse(
    t_in: wp.array(dtype=wp.float64),
    q: wp.array(dtype=wp.float64),
    r: wp.float64,
    dt: wp.float64,
    cool: wp.float64,
    t_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = t_in.shape[0]
    left = wp.float64(0.0)
    right = wp.float64(0.0)
    if i > 0:
        left = t_in[i - 1]
    if i < n - 1:
        right = t_in[i + 1]
    c = t_in[i]
    t_out[i] = c + r * (left - wp.float64(2.0) * c + right) + dt * (q[i] - cool * c)


@wp.kernel
def misfit(t: wp.array(dtype=wp.float64), target: wp.array(dtype=wp.float64), scale: wp.float64,
           loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = t[i] - target[i]
    wp.atomic_add(loss, 0, scale * d * d)


@wp.kernel
def descend(amp: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    j = wp.tid()
    amp[j] = amp[j] - lr * g[j]


def simulate(target, cells, steps, q):
    states = [wp.zeros(cells, dtype=wp.float64, requires_grad=True) for _ in range(steps + 1)]
    for k in range(steps):
        wp.launch(diffuse, dim=cells, inputs=[states[k], q, wp.float64(0.2), wp.float64(0.05), wp.float64(0.3)],
                  outputs=[states[k + 1]])
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(misfit, dim=cells, inputs=[states[-1], target, wp.float64(1.0 / cells)], outputs=[loss])
    return loss


def main():
    parser = argparse.ArgumentParser(description="fit the heater profile of a rod to a measured temperature")
    parser.add_argument("--cells", type=int, default=16)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--lr", type=float, default=2.0)
    args = parser.parse_args()

    nb = 4
    centers = wp.array(np.linspace(2.0, args.cells - 2.0, nb), dtype=wp.float64)
    width = wp.float64(args.cells / 6.0)
    amp = wp.array(np.full(nb, 0.5), dtype=wp.float64, requires_grad=True)
    true_amp = wp.array([1.0, 0.2, 0.7, 1.3], dtype=wp.float64)
    q_true = wp.zeros(args.cells, dtype=wp.float64)
    wp.launch(heater_source, dim=args.cells, inputs=[true_amp, centers, width, nb], outputs=[q_true])
    target = wp.zeros(args.cells, dtype=wp.float64)
    states = [wp.zeros(args.cells, dtype=wp.float64) for _ in range(args.steps + 1)]
    for k in range(args.steps):
        wp.launch(diffuse, dim=args.cells, inputs=[states[k], q_true, wp.float64(0.2), wp.float64(0.05), wp.float64(0.3)],
                  outputs=[states[k + 1]])
    target.assign(states[-1].numpy())

    for it in range(args.iters):
        q = wp.zeros(args.cells, dtype=wp.float64, requires_grad=True)
        wp.launch(heater_source, dim=args.cells, inputs=[amp, centers, width, nb], outputs=[q])
        tape = wp.Tape()
        with tape:
            loss = simulate(target, args.cells, args.steps, q)
        tape.backward(loss)
        wp.launch(descend, dim=nb, inputs=[amp, amp.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  misfit {loss.numpy()[0]:.6e}")
    print("amplitudes", amp.numpy())


if __name__ == "__main__":
    main()
