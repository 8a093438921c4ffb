import numpy as np
import warp as wp


@wp.kernel
def square(w: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = w[i] * w[i]


if __name__ == "__main__":
    w = wp.array(np.ones(3, dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=3, inputs=[w, y])
    tape.backward(loss=y)
    print(w.grad.numpy())
