"""A least-squares fit whose first kernel writes one component of a vector array element."""

import numpy as np
import warp as wp


@wp.kernel
def place(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i].x = 2.0 * x[i]


@wp.kernel
def misfit(y: wp.array(dtype=wp.vec3), target: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = y[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def main():
    n = 8
    x = wp.array(np.linspace(0.5, 1.5, n, dtype=np.float32), dtype=float, requires_grad=True)
    target = wp.array(np.ones((n, 3), dtype=np.float32), dtype=wp.vec3)
    for it in range(3):
        y = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(place, dim=n, inputs=[x], outputs=[y])
            wp.launch(misfit, dim=n, inputs=[y, target], outputs=[loss])
        tape.backward(loss)
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")
        x = wp.array(x.numpy() - 0.05 * x.grad.numpy(), dtype=float, requires_grad=True)


if __name__ == "__main__":
    main()
