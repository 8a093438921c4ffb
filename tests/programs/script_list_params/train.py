import numpy as np
import warp as wp


@wp.kernel
def sq(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array2d(dtype=float), e: wp.array(dtype=float),
       loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, a[i] * a[i] + 2.0 * b[i] * b[i] + 3.0 * c[i, 1] * c[i, 1] + e[i])


def make(n):
    return wp.array(np.ones(n), dtype=float, requires_grad=True)


def main():
    vs = [wp.array(np.full(3, 1.0 + i), dtype=float, requires_grad=True) for i in range(2)]
    grid = wp.array(np.ones((3, 2)), dtype=float, requires_grad=True)
    extra = make(3)
    for it in range(2):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=3, inputs=[vs[0], vs[1], grid, extra], outputs=[loss])
        tape.backward(loss)
        for v in vs + [grid, extra]:
            v.assign(v.numpy() - 0.1 * v.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
