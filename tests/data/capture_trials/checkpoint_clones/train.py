"""Fit per-element decay rates a so that x0 * a^4 (four steps x <- a * x) hits a target, with a checkpointed
rollout: the states after each segment of two steps are computed without a tape, then each segment is replayed
under its own tape from a clone of its checkpoint, the adjoint of its end state handed on as the seed of the
segment before. --order says in which order the segments are replayed: "reverse" (the last one first, each
seeded with the adjoint the later one produced) or "forward" (each seeded with an adjoint buffer not yet filled)."""
import argparse

import numpy as np
import warp as wp


@wp.kernel
def decay(x: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = a[i] * x[i]


@wp.kernel
def misfit(x: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def descend(a: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    a[i] = a[i] - lr * g[i]


def run(x, a, steps):
    for _ in range(steps):
        y = wp.zeros_like(x)
        wp.launch(decay, dim=x.shape[0], inputs=[x, a], outputs=[y])
        x = y
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--order", default="reverse")
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    x0 = wp.array(np.array([1.0, 2.0, -1.0, 0.5]), dtype=wp.float64)
    target = wp.array(np.array([0.5, 0.3, -0.2, 0.4]), dtype=wp.float64)
    a = wp.array(np.array([0.9, 0.8, 1.1, 1.2]), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        marks = [x0, run(x0, a, 2)]
        adj = [wp.zeros(4, dtype=wp.float64) for _ in range(3)]
        order = [1, 0] if args.order == "reverse" else [0, 1]
        loss = None
        for s in order:
            xs = wp.clone(marks[s], requires_grad=True)
            tape = wp.Tape()
            with tape:
                xe = run(xs, a, 2)
                if s == 1:
                    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
                    wp.launch(misfit, dim=4, inputs=[xe, target], outputs=[loss])
            if s == 1:
                tape.backward(loss)
            else:
                tape.backward(grads={xe: adj[s + 1]})
            wp.copy(adj[s], xs.grad)
        wp.launch(descend, dim=4, inputs=[a, a.grad, wp.float64(0.01)])
        a.grad.zero_()
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
