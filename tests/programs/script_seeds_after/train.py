import numpy as np
import warp as wp


@wp.kernel
def sq_err(w: wp.array(dtype=float), t: wp.array(dtype=float), e: wp.array(dtype=float)):
    i = wp.tid()
    d = w[i] - t[i]
    e[i] = d * d


def mse(w, t):
    e = wp.zeros(4, dtype=float)
    wp.launch(sq_err, dim=4, inputs=[w, t, e])
    return float(np.mean(e.numpy()))


def main():
    t = wp.array(np.array([1.0, -1.0, 0.5, 2.0], dtype=np.float32))
    w = wp.array(np.zeros(4, dtype=np.float32), requires_grad=True)
    for it in range(3):
        e = wp.zeros(4, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(sq_err, dim=4, inputs=[w, t, e])
        tape.backward(grads={e: wp.ones(4, dtype=float)})
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()
        print(f"iter {it} loss {mse(w, t):.6f}")  # the loss after the update, at the new params


if __name__ == "__main__":
    main()
