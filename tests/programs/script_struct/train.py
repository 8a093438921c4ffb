import argparse

import numpy as np
import warp as wp


@wp.struct
class State:
    x: wp.array(dtype=float)
    y: wp.array(dtype=float)


@wp.kernel
def forward(k: wp.array(dtype=float), s: State, out: State):
    i = wp.tid()
    out.y[i] = k[i] * s.x[i] + 0.25


@wp.kernel
def sq(s: State, loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, s.y[i] * s.y[i])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(5)
    n = 4
    s = State()
    s.x = wp.array(rng.uniform(1.0, 2.0, n), dtype=float)
    s.y = wp.zeros(n, dtype=float)
    out = State()
    out.x = wp.zeros(n, dtype=float)
    out.y = wp.zeros(n, dtype=float, requires_grad=True)
    k = wp.array(np.array([0.5, 1.0, -1.5, 2.0]), dtype=float, requires_grad=True)
    for it in range(args.iters):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(forward, dim=n, inputs=[k, s], outputs=[out])
            wp.launch(sq, dim=n, inputs=[out], outputs=[loss])
        tape.backward(loss)
        k.assign(k.numpy() - 0.01 * k.grad.numpy())
        tape.zero()
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")


if __name__ == "__main__":
    main()
