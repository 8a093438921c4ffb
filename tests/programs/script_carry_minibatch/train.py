import numpy as np
import warp as wp


@wp.kernel
def sq_loss(w: wp.array(dtype=wp.float64), t: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = w[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


def main():
    rng = np.random.default_rng(5)
    w = wp.array(np.zeros(3), dtype=wp.float64, requires_grad=True)
    for it in range(4):
        t = wp.array(rng.normal(size=3), dtype=wp.float64)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq_loss, dim=3, inputs=[w, t, loss])
        tape.backward(loss)
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        w.grad.zero_()


if __name__ == "__main__":
    main()
