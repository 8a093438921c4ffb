import numpy as np
import warp as wp


@wp.kernel
def noisy(w: wp.array(dtype=float), x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, (w[i] + x[i]) * (w[i] + x[i]))


def main():
    rng = np.random.default_rng()
    w = wp.array(np.ones(3, dtype=np.float32), requires_grad=True)
    for it in range(2):
        x = wp.array(rng.normal(size=3).astype(np.float32))
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(noisy, dim=3, inputs=[w, x, loss])
        tape.backward(loss)
        w.assign(w.numpy() - 0.1 * w.grad.numpy())


if __name__ == "__main__":
    main()
