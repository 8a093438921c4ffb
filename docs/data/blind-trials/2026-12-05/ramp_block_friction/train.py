"""Fit the Coulomb friction coefficient of six sample blocks sliding down an inclined plane.

Friction uses a regularised sign, tanh(v / eps), so that the blocks come to rest smoothly.
"""
import math

import numpy as np
import warp as wp

wp.init()

N_BLOCKS = 6
STEPS = 120
DT = 0.01
EPS = 0.1
G = 9.81
ANGLE = math.radians(15.0)


@wp.func
def smooth_sign(v: float, eps: float):
    x = wp.clamp(v / eps, -20.0, 20.0)
    return wp.tanh(x)


@wp.func_grad(smooth_sign)
def adj_smooth_sign(v: float, eps: float, adj_ret: float):
    s = wp.tanh(wp.clamp(v / eps, -20.0, 20.0))
    wp.adjoint[v] += adj_ret * (1.0 - s * s)


@wp.kernel
def slide(x: wp.array(dtype=float), v: wp.array(dtype=float), mu: wp.array(dtype=float),
          g_along: float, g_normal: float, eps: float, dt: float,
          x_out: wp.array(dtype=float), v_out: wp.array(dtype=float)):
    i = wp.tid()
    vi = v[i]
    a = g_along - mu[i] * g_normal * smooth_sign(vi, eps)
    vn = vi + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def track(x: wp.array(dtype=float), seen: wp.array(dtype=float), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - seen[i]
    wp.atomic_add(loss, 0, w * d * d)


@wp.kernel
def project_step(mu: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    mu[i] = wp.clamp(mu[i] - lr * g[i], 0.05, 1.5)


def reference(mu, v0):
    x = np.zeros(N_BLOCKS)
    v = v0.copy()
    ga, gn = G * math.sin(ANGLE), G * math.cos(ANGLE)
    out = []
    for _ in range(STEPS):
        v = v + DT * (ga - mu * gn * np.tanh(np.clip(v / EPS, -20.0, 20.0)))
        x = x + DT * v
        out.append(x.copy())
    return out


def main():
    mu_true = np.array([0.35, 0.42, 0.5, 0.38, 0.6, 0.45])
    v0_np = np.array([1.2, 1.5, 0.8, 1.0, 1.8, 1.3])
    seen = [wp.array(s.astype(np.float32), dtype=float) for s in reference(mu_true, v0_np)]

    mu = wp.array(np.full(N_BLOCKS, 0.45, dtype=np.float32), dtype=float, requires_grad=True)
    xs = [wp.zeros(N_BLOCKS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    vs = [wp.zeros(N_BLOCKS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    vs[0].assign(v0_np.astype(np.float32))
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    ga, gn = G * math.sin(ANGLE), G * math.cos(ANGLE)
    w = 1.0 / (STEPS * N_BLOCKS)

    for it in range(30):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            for t in range(STEPS):
                wp.launch(slide, dim=N_BLOCKS, inputs=[xs[t], vs[t], mu, ga, gn, EPS, DT],
                          outputs=[xs[t + 1], vs[t + 1]])
                wp.launch(track, dim=N_BLOCKS, inputs=[xs[t + 1], seen[t], w], outputs=[loss])
        tape.backward(loss)
        wp.launch(project_step, dim=N_BLOCKS, inputs=[mu, mu.grad, 0.3])
        tape.zero()
        if it % 5 == 0 or it == 29:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("mu", np.round(mu.numpy(), 4))


if __name__ == "__main__":
    main()
