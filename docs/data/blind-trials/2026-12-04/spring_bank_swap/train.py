"""Identify the stiffness of a bank of damped oscillators from observed trajectories."""
import numpy as np
import warp as wp

N = 8
STEPS = 40
DT = wp.constant(0.02)
DAMP = wp.constant(0.3)


@wp.kernel
def integrate(x: wp.array(dtype=float), v: wp.array(dtype=float), k: wp.array(dtype=float),
              x_out: wp.array(dtype=float), v_out: wp.array(dtype=float)):
    i = wp.tid()
    a = -k[i] * x[i] - DAMP * v[i]
    v_new = v[i] + DT * a
    v_out[i] = v_new
    x_out[i] = x[i] + DT * v_new


@wp.kernel
def track(x: wp.array(dtype=float), obs: wp.array2d(dtype=float), t: int, scale: float,
          loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - obs[t, i]
    wp.atomic_add(loss, 0, scale * d * d)


@wp.kernel
def descend(k: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, k_next: wp.array(dtype=float)):
    i = wp.tid()
    k_next[i] = k[i] - lr * g[i]


def initial_state():
    x0 = np.linspace(0.5, 1.2, N)
    v0 = np.zeros(N)
    return x0, v0


def observe(k_true):
    x, v = initial_state()
    out = np.zeros((STEPS, N))
    for t in range(STEPS):
        v = v + 0.02 * (-k_true * x - 0.3 * v)
        x = x + 0.02 * v
        out[t] = x
    return out


K_TRUE = np.linspace(3.0, 6.0, N)


def rollout(k, obs):
    x0, v0 = initial_state()
    x = wp.array(x0, dtype=float, requires_grad=True)
    v = wp.array(v0, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    for t in range(STEPS):
        x_next = wp.empty(N, dtype=float, requires_grad=True)
        v_next = wp.empty(N, dtype=float, requires_grad=True)
        wp.launch(integrate, dim=N, inputs=[x, v, k], outputs=[x_next, v_next])
        wp.launch(track, dim=N, inputs=[x_next, obs, t, 1.0 / (N * STEPS)], outputs=[loss])
        x, v = x_next, v_next
    return loss


def main(iters=16, lr=40.0):
    obs = wp.array(observe(K_TRUE), dtype=float)
    k_cur = wp.array(np.full(N, 4.0), dtype=float, requires_grad=True)
    k_new = wp.zeros(N, dtype=float, requires_grad=True)
    for it in range(iters):
        tape = wp.Tape()
        with tape:
            loss = rollout(k_cur, obs)
        tape.backward(loss)
        wp.launch(descend, dim=N, inputs=[k_cur, k_cur.grad, lr], outputs=[k_new])
        k_cur, k_new = k_new, k_cur
        print(f"iter {it:3d} loss {loss.numpy()[0]:.6e}")
    print("k", k_cur.numpy())


if __name__ == "__main__":
    main()
