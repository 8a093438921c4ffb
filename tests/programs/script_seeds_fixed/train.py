import numpy as np
import warp as wp


@wp.kernel
def sq_err(w: wp.array(dtype=float), t: wp.array(dtype=float), e: wp.array(dtype=float)):
    i = wp.tid()
    d = w[i] - t[i]
    e[i] = d * d


def main():
    t = wp.array(np.array([1.0, -1.0, 0.5, 2.0], dtype=np.float32))
    w = wp.array(np.zeros(4, dtype=np.float32), requires_grad=True)
    e = wp.zeros(4, dtype=float, requires_grad=True)
    seed = wp.full(4, 0.25, dtype=float)
    for it in range(3):
        tape = wp.Tape()
        with tape:
            wp.launch(sq_err, dim=4, inputs=[w, t, e])
        tape.backward(grads={e: seed})
        print(f"loss {np.mean(e.numpy()):.6f}")
        w.assign(w.numpy() - 0.1 * w.grad.numpy())
        tape.zero()


if __name__ == "__main__":
    main()
