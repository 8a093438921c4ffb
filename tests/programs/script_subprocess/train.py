import subprocess
import sys

import numpy as np
import warp as wp


@wp.kernel
def sq(w: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, w[i] * w[i])


if __name__ == "__main__":
    if "--worker" not in sys.argv:
        subprocess.run([sys.executable, __file__, "--worker"], check=True)
    else:
        w = wp.array(np.ones(3, dtype=np.float32), requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=3, inputs=[w, loss])
        tape.backward(loss)
        print(w.grad.numpy())
