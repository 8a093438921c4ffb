import argparse

import numpy as np
import warp as wp


@wp.kernel
def step(w: wp.array(dtype=wp.float64), x_in: wp.array(dtype=wp.float64), x_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x_out[i] = w[i] * x_in[i] + wp.float64(1.0)


@wp.kernel
def sq(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--windows", action="store_true")
    args = ap.parse_args()
    w = wp.array(np.array([0.5, -1.0, 2.0]), dtype=wp.float64, requires_grad=True)
    x0 = wp.array(np.array([1.0, 2.0, 3.0]), dtype=wp.float64)
    mid = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    xf = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    for it in range(4):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(step, dim=3, inputs=[w, x0, mid])  # segment 1 without a tape: the checkpoint
        tape2 = wp.Tape()
        with tape2:
            wp.launch(step, dim=3, inputs=[w, mid, xf])
            wp.launch(sq, dim=3, inputs=[xf, loss])
        tape2.backward(loss)
        tape1 = wp.Tape()
        if args.windows:  # a second loss on its own tape: the update takes the sum of both gradients
            loss1 = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            with tape1:
                wp.launch(step, dim=3, inputs=[w, x0, mid])
                wp.launch(sq, dim=3, inputs=[mid, loss1])
            tape1.backward(loss1)
        else:  # segment 1 replayed under its own tape, seeded with the adjoint segment 2 left on the checkpoint
            adj = wp.clone(mid.grad)
            with tape1:
                wp.launch(step, dim=3, inputs=[w, x0, mid])
            tape1.backward(grads={mid: adj})
        w.assign(w.numpy() - 0.001 * w.grad.numpy())
        tape1.zero()
        tape2.zero()


if __name__ == "__main__":
    main()
