"""Fit linear stiffness of Duffing oscillators to a sequence of observed displacements.

Gradient by segment checkpointing: the forward stores only the state at segment boundaries,
then each segment is replayed under its own tape in reverse and seeded with the adjoint of the
state handed over from the segment after it."""
import numpy as np
import warp as wp

N = 5
SEGMENTS = 3
SEG_STEPS = 15
DT = 0.02
EPS = 2.0
DAMP = 0.2


@wp.kernel
def duffing(x: wp.array(dtype=float), v: wp.array(dtype=float), k: wp.array(dtype=float),
            eps: float, damp: float, dt: float, x_out: wp.array(dtype=float), v_out: wp.array(dtype=float)):
    i = wp.tid()
    xi = x[i]
    a = -k[i] * xi - eps * xi * xi * xi - damp * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = xi + dt * vn


@wp.kernel
def obs_error(x: wp.array(dtype=float), obs: wp.array(dtype=float), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - obs[i]
    wp.atomic_add(loss, 0, w * d * d)


@wp.kernel
def update(k: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    k[i] = k[i] - lr * g[i]


def x_start():
    return np.linspace(0.3, 1.0, N), np.zeros(N)


def observations(k):
    x, v = x_start()
    out = []
    for s in range(SEGMENTS):
        for _ in range(SEG_STEPS):
            v = v + DT * (-k * x - EPS * x ** 3 - DAMP * v)
            x = x + DT * v
        out.append(x.copy())
    return out


K_TRUE = np.array([2.0, 3.5, 5.0, 1.5, 4.0])


def replay(x0, v0, k, obs, loss):
    xs, vs = x0, v0
    for _ in range(SEG_STEPS):
        xn = wp.zeros(N, dtype=float, requires_grad=True)
        vn = wp.zeros(N, dtype=float, requires_grad=True)
        wp.launch(duffing, dim=N, inputs=[xs, vs, k, EPS, DAMP, DT], outputs=[xn, vn])
        xs, vs = xn, vn
    wp.launch(obs_error, dim=N, inputs=[xs, obs, 1.0 / N], outputs=[loss])
    return xs, vs


def main(iters=15, lr=0.5):
    obs = [wp.array(o, dtype=float) for o in observations(K_TRUE)]
    k = wp.array(np.full(N, 3.0), dtype=float, requires_grad=True)
    x0_np, v0_np = x_start()
    for it in range(iters):
        ck = [(wp.array(x0_np, dtype=float, requires_grad=True), wp.array(v0_np, dtype=float, requires_grad=True))]
        total = 0.0
        for s in range(SEGMENTS):
            scratch = wp.zeros(1, dtype=float)
            xe, ve = replay(ck[s][0], ck[s][1], k, obs[s], scratch)
            total += float(scratch.numpy()[0])
            ck.append((wp.clone(xe, requires_grad=True), wp.clone(ve, requires_grad=True)))

        adj_x = adj_v = None
        for s in reversed(range(SEGMENTS)):
            x0 = wp.clone(ck[s][0], requires_grad=True)
            v0 = wp.clone(ck[s][1], requires_grad=True)
            loss = wp.zeros(1, dtype=float, requires_grad=True)
            tape = wp.Tape()
            with tape:
                xe, ve = replay(x0, v0, k, obs[s], loss)
            if adj_x is not None:
                wp.copy(xe.grad, adj_x)
                wp.copy(ve.grad, adj_v)
            tape.backward(loss)
            adj_x, adj_v = x0.grad, v0.grad

        wp.launch(update, dim=N, inputs=[k, k.grad, lr])
        k.grad.zero_()
        if it % 3 == 0:
            print(f"iter {it:3d} loss {total:.6e}")
    print("k", np.round(k.numpy(), 3))


if __name__ == "__main__":
    main()
