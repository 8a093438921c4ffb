"""Logistic regression on a small 2-D data set: heavy-ball momentum with a proximal anchor."""
import numpy as np
import warp as wp

D = 3
J = 40
RHO = 0.5
BETA = 0.8


@wp.kernel
def logits(x: wp.array2d(dtype=float), w: wp.array(dtype=float), z: wp.array(dtype=float)):
    j = wp.tid()
    s = w[2]
    for d in range(2):
        s += w[d] * x[j, d]
    z[j] = s


@wp.kernel
def bce(z: wp.array(dtype=float), label: wp.array(dtype=float), loss: wp.array(dtype=float)):
    j = wp.tid()
    zj = z[j]
    # log(1 + exp(-|z|)) + max(z, 0) - y z
    l = wp.log(1.0 + wp.exp(-wp.abs(zj))) + wp.max(zj, 0.0) - label[j] * zj
    wp.atomic_add(loss, 0, l / float(z.shape[0]))


@wp.kernel
def anchor_pull(w: wp.array(dtype=float), anchor: wp.array(dtype=float), rho: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = w[i] - anchor[i]
    wp.atomic_add(loss, 0, rho * d * d)


@wp.kernel
def heavy_ball(w: wp.array(dtype=float), g: wp.array(dtype=float), vel: wp.array(dtype=float), lr: float, beta: float):
    i = wp.tid()
    v = beta * vel[i] + g[i]
    vel[i] = v
    w[i] = w[i] - lr * v


def dataset():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((J, 2))
    y = (x @ np.array([1.5, -2.0]) + 0.3 + 0.5 * rng.standard_normal(J) > 0).astype(np.float64)
    return x, y


def main(iters=20, lr=0.4):
    x_np, y_np = dataset()
    x = wp.array(x_np, dtype=float)
    y = wp.array(y_np, dtype=float)
    w = wp.array([0.1, -0.1, 0.05], dtype=float, requires_grad=True)
    anchor = wp.clone(w, requires_grad=False)
    vel = wp.zeros(D, dtype=float)
    for it in range(iters):
        z = wp.zeros(J, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(logits, dim=J, inputs=[x, w], outputs=[z])
            wp.launch(bce, dim=J, inputs=[z, y], outputs=[loss])
            wp.launch(anchor_pull, dim=D, inputs=[w, anchor, RHO], outputs=[loss])
        tape.backward(loss)
        wp.copy(anchor, w)
        wp.launch(heavy_ball, dim=D, inputs=[w, w.grad, vel, lr, BETA])
        tape.zero()
        if it % 4 == 0:
            print(f"iter {it:3d} objective {loss.numpy()[0]:.6f} w {np.round(w.numpy(), 3)}")


if __name__ == "__main__":
    main()
