import numpy as np
import warp as wp

@wp.kernel
def energy(w: wp.array(dtype=float), drift: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    e = w[i] * w[i] * (1.0 + drift[i]) - 3.0 * w[i]
    wp.atomic_add(loss, 0, e)

@wp.kernel
def track(w: wp.array(dtype=float), w0: wp.array(dtype=float), drift: wp.array(dtype=float)):
    i = wp.tid()
    drift[i] = 0.5 * (w[i] - w0[i])

@wp.kernel
def sgd(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    p[i] = p[i] - lr * g[i]

def main():
    n = 5
    init = np.array([0.2, 0.4, 0.6, 0.8, 1.0])
    w = wp.array(init, dtype=float, requires_grad=True)
    w0 = wp.array(init, dtype=float)
    drift = wp.zeros(n, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    for it in range(30):
        tape = wp.Tape()
        with tape:
            wp.launch(energy, dim=n, inputs=[w, drift, loss])
        wp.launch(track, dim=n, inputs=[w, w0, drift])
        tape.backward(loss)
        wp.launch(sgd, dim=n, inputs=[w, w.grad, 0.1])
        print(f"iter {it} loss {loss.numpy()[0]:.6f}")
        tape.zero()
        loss.zero_()

if __name__ == "__main__":
    main()
