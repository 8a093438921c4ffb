"""Fit a softplus network to a rectifier-like response curve (Huber loss, Adam)."""
import numpy as np
import warp as wp
import warp.optim

from layers import forward, huber

H = 6
J = 32


def dataset():
    x = np.linspace(-2.0, 2.0, J)
    return x, np.maximum(x - 0.3, 0.0) + 0.5 * np.maximum(-x - 1.0, 0.0)


def init():
    rng = np.random.default_rng(4)
    return rng.normal(0, 1.0, H), rng.normal(0, 0.5, H), rng.normal(0, 0.5, H)


def main(iters=25):
    x_np, t_np = dataset()
    x = wp.array(x_np, dtype=float)
    t = wp.array(t_np, dtype=float)
    w0, b0, v0 = init()
    w = wp.array(w0, dtype=float, requires_grad=True)
    b = wp.array(b0, dtype=float, requires_grad=True)
    v = wp.array(v0, dtype=float, requires_grad=True)
    opt = warp.optim.Adam([w, b, v], lr=0.05)
    for it in range(iters):
        y = wp.zeros(J, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(forward, dim=(J, H), inputs=[x, w, b, v], outputs=[y])
            wp.launch(huber, dim=J, inputs=[y, t, 0.5], outputs=[loss])
        tape.backward(loss)
        opt.step([w.grad, b.grad, v.grad])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d} loss {loss.numpy()[0]:.6f}")


if __name__ == "__main__":
    main()
