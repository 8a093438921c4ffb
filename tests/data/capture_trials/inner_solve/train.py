"""An outer fit whose iteration runs a small inner solve with its own tape (gradient descent on an energy,
the solve's iterate updated by a kernel). --shape per_step: the inner solve runs at every step of the outer
rollout, between the outer tape's recordings; --shape before: it settles a displacement before the outer
forward. --variant bug: the outer loss reads the inner solution, whose dependence on the params the outer
tape does not see. --inner: steps of each inner solve and --solves: solves per
iteration (of --shape before; the last one's iterate is used)."""
import argparse

import numpy as np
import warp as wp


@wp.kernel
def step(x: wp.array(dtype=float), v: wp.array(dtype=float), dt: float, x_next: wp.array(dtype=float)):
    i = wp.tid()
    x_next[i] = x[i] + dt * v[i] * wp.cos(x[i])


@wp.kernel
def energy(q: wp.array(dtype=float), ref: wp.array(dtype=float), mu: float, e: wp.array(dtype=float)):
    i = wp.tid()
    d = q[i] - ref[i]
    wp.atomic_add(e, 0, 0.5 * d * d + 0.5 * mu * q[i] * q[i])


@wp.kernel
def descend(q: wp.array(dtype=float), g: wp.array(dtype=float), a: float):
    i = wp.tid()
    q[i] = q[i] - a * g[i]


@wp.kernel
def misfit(x: wp.array(dtype=float), t: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def scaled_misfit(th: wp.array(dtype=float), u: wp.array(dtype=float), t: wp.array(dtype=float),
                  loss: wp.array(dtype=float)):
    i = wp.tid()
    d = th[i] * u[i] - t[i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def sgd(w: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def settle(ref, mu, n_inner=4):
    """Gradient descent on 0.5 |q - ref|^2 + 0.5 mu |q|^2 from q = 0."""
    q = wp.zeros(ref.shape[0], dtype=float, requires_grad=True)
    e = wp.zeros(1, dtype=float, requires_grad=True)
    tin = wp.Tape()
    for _ in range(n_inner):
        e.zero_()
        with tin:
            wp.launch(energy, dim=ref.shape[0], inputs=[q, ref, mu, e])
        tin.backward(e)
        wp.launch(descend, dim=ref.shape[0], inputs=[q, q.grad, 0.4])
        tin.zero()
        tin.reset()
    return q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="per_step")
    ap.add_argument("--variant", default="ok")
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--inner", type=int, default=4)
    ap.add_argument("--solves", type=int, default=1)
    args = ap.parse_args()
    n, T, dt = 3, 3, 0.1
    target = wp.array(np.array([0.3, -0.2, 0.5], dtype=np.float32))
    x0 = wp.array(np.array([0.1, 0.2, -0.1], dtype=np.float32))
    v = wp.array(np.array([1.0, -0.5, 2.0], dtype=np.float32), requires_grad=True)
    th = wp.array(np.array([1.5, 0.5, -1.0], dtype=np.float32), requires_grad=True)
    f = wp.array(np.array([1.0, 2.0, -1.0], dtype=np.float32))
    for it in range(args.iters):
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        if args.shape == "per_step":
            xs = [x0] + [wp.zeros(n, dtype=float, requires_grad=True) for _ in range(T)]
            q = None
            for t in range(T):
                with tape:
                    wp.launch(step, dim=n, inputs=[xs[t], v, dt, xs[t + 1]])
                q = settle(xs[t + 1], 0.5)
            with tape:
                wp.launch(misfit, dim=n, inputs=[q if args.variant == "bug" else xs[T], target, loss])
            tape.backward(loss)
            wp.launch(sgd, dim=n, inputs=[v, v.grad, 0.05])
            tape.zero()
        else:
            for _ in range(args.solves):
                u = settle(th if args.variant == "bug" else f, 0.5, args.inner)
            with tape:
                wp.launch(scaled_misfit, dim=n, inputs=[th, u, target, loss])
            tape.backward(loss)
            wp.launch(sgd, dim=n, inputs=[th, th.grad, 0.05])
            tape.zero()
        print("loss", float(loss.numpy()[0]))


if __name__ == "__main__":
    main()
