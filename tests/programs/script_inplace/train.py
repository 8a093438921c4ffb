import numpy as np
import warp as wp


@wp.kernel
def grow(q: wp.array(dtype=float), k: wp.array(dtype=float), dt: float):
    i = wp.tid()
    q[i] = q[i] + dt * k[i] * q[i] * q[i]


@wp.kernel
def total(q: wp.array(dtype=float), loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, q[wp.tid()])


def main():
    k = wp.array(np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32), requires_grad=True)
    for it in range(3):
        q = wp.array(np.array([1.0, 0.8, 0.6, 0.4], dtype=np.float32), requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            for s in range(4):
                wp.launch(grow, dim=4, inputs=[q, k, 0.1])
            wp.launch(total, dim=4, inputs=[q, loss])
        tape.backward(loss)
        k.assign(k.numpy() - 0.01 * k.grad.numpy())
        tape.zero()
        print("loss", loss.numpy()[0])


if __name__ == "__main__":
    main()
