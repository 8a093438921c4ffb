import numpy as np
import warp as wp


@wp.kernel
def sq(w: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w[i] * w[i])


if __name__ == "__main__":
    host = np.ones(3, dtype=np.float32)
    w = wp.from_dlpack(host)
    w.requires_grad = True
    for it in range(2):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=3, inputs=[w, loss])
        tape.backward(loss)
        host -= 0.1 * w.grad.numpy()
        tape.zero()
