"""Estimate the quadratic drag coefficient and release velocity of hailstones filmed in a drop tower."""
import numpy as np
import warp as wp

wp.init()

N_STONES = 6
STEPS = 50
DT = 0.02
LR = 0.5


@wp.kernel
def drag_step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), c: wp.array(dtype=float),
              gravity: wp.vec3, dt: float,
              x_out: wp.array(dtype=wp.vec3), v_out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    vi = v[i]
    speed = wp.sqrt(wp.dot(vi, vi))
    a = gravity - c[i] * speed * vi
    vn = vi + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def release(v0: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v[i] = v0[i]


@wp.kernel
def position_misfit(x: wp.array(dtype=wp.vec3), seen: wp.array(dtype=wp.vec3), w: float,
                    loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - seen[i]
    wp.atomic_add(loss, 0, w * wp.dot(d, d))


def reference(c, v0):
    x = np.zeros((N_STONES, 3))
    v = v0.copy()
    g = np.array([0.0, -9.81, 0.0])
    seen = []
    for _ in range(STEPS):
        speed = np.linalg.norm(v, axis=1, keepdims=True)
        v = v + DT * (g - c[:, None] * speed * v)
        x = x + DT * v
        seen.append(x.copy())
    return seen


def main():
    c_true = np.array([0.08, 0.12, 0.2, 0.15, 0.3, 0.1])
    v0_true = np.array([[0.3, -0.5, 0.1], [-0.2, 0.4, 0.0], [0.1, -1.0, -0.2],
                        [0.0, 0.2, 0.3], [0.4, -0.3, 0.1], [-0.1, 0.0, -0.4]])
    seen = [wp.array(s.astype(np.float32), dtype=wp.vec3) for s in reference(c_true, v0_true)]

    c = wp.array(np.full(N_STONES, 0.15, dtype=np.float32), dtype=float, requires_grad=True)
    v0 = wp.zeros(N_STONES, dtype=wp.vec3, requires_grad=True)
    xs = [wp.zeros(N_STONES, dtype=wp.vec3, requires_grad=True) for _ in range(STEPS + 1)]
    vs = [wp.zeros(N_STONES, dtype=wp.vec3, requires_grad=True) for _ in range(STEPS + 1)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    gravity = wp.vec3(0.0, -9.81, 0.0)
    w = 1.0 / STEPS

    for it in range(25):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(release, dim=N_STONES, inputs=[v0], outputs=[vs[0]])
            for t in range(STEPS):
                wp.launch(drag_step, dim=N_STONES, inputs=[xs[t], vs[t], c, gravity, DT],
                          outputs=[xs[t + 1], vs[t + 1]])
                wp.launch(position_misfit, dim=N_STONES, inputs=[xs[t + 1], seen[t], w], outputs=[loss])
        tape.backward(loss)
        g_c = c.grad.numpy()
        g_v = v0.grad.numpy()
        c.assign(c.numpy() - LR * g_c)
        v0.assign(v0.numpy() - LR * g_v)
        tape.zero()
        if it % 5 == 0 or it == 24:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("drag", c.numpy())
    print("release velocity", v0.numpy())


if __name__ == "__main__":
    main()
