"""Proximal gradient fit of a saturating radial-basis model to noisy samples."""
import numpy as np
import warp as wp

M = 8
J = 32
WIDTH = 0.15
RHO = 2.0


@wp.kernel
def basis_sum(x: wp.array(dtype=float), centers: wp.array(dtype=float), w: wp.array(dtype=float),
              width: float, pre: wp.array(dtype=float)):
    j, i = wp.tid()
    d = (x[j] - centers[i]) / width
    wp.atomic_add(pre, j, w[i] * wp.exp(-0.5 * d * d))


@wp.kernel
def data_term(pre: wp.array(dtype=float), y: wp.array(dtype=float), loss: wp.array(dtype=float)):
    j = wp.tid()
    r = wp.tanh(pre[j]) - y[j]
    wp.atomic_add(loss, 0, r * r / float(pre.shape[0]))


@wp.kernel
def proximal_term(w: wp.array(dtype=float), anchor: wp.array(dtype=float), rho: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = w[i] - anchor[i]
    wp.atomic_add(loss, 0, rho * d * d)


@wp.kernel
def gd(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def dataset():
    rng = np.random.default_rng(11)
    x = np.sort(rng.uniform(0.0, 1.0, J))
    y = 0.8 * np.sin(2.0 * np.pi * x) + 0.05 * rng.standard_normal(J)
    return x, y


def main(iters=20, lr=0.5):
    x_np, y_np = dataset()
    x = wp.array(x_np, dtype=float)
    y = wp.array(y_np, dtype=float)
    centers = wp.array(np.linspace(0.0, 1.0, M), dtype=float)
    w = wp.array(np.zeros(M), dtype=float, requires_grad=True)
    anchor = wp.clone(w)
    anchor.requires_grad = False
    for it in range(iters):
        pre = wp.zeros(J, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(basis_sum, dim=(J, M), inputs=[x, centers, w, WIDTH], outputs=[pre])
            wp.launch(data_term, dim=J, inputs=[pre, y], outputs=[loss])
            wp.launch(proximal_term, dim=M, inputs=[w, anchor, RHO], outputs=[loss])
        wp.copy(anchor, w)
        tape.backward(loss)
        wp.launch(gd, dim=M, inputs=[w, w.grad, lr])
        tape.zero()
        if it % 4 == 0:
            print(f"iter {it:3d} objective {loss.numpy()[0]:.6f}")
    print("w", np.round(w.numpy(), 3))


if __name__ == "__main__":
    main()
