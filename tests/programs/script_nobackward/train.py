import numpy as np
import warp as wp


@wp.kernel
def total(w: wp.array(dtype=float), loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, w[wp.tid()])


if __name__ == "__main__":
    w = wp.array(np.ones(3, dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    wp.launch(total, dim=3, inputs=[w, loss])
    print("loss", loss.numpy()[0])
