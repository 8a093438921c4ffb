"""Estimate quadratic drag coefficients of thrown balls from positions tracked at a few frames.

The rollout is long, so it is differentiated in windows, one tape per window."""
import numpy as np
import warp as wp
import warp.optim

N = 4
WINDOWS = 4
WSTEPS = 10
DT = 0.02


@wp.kernel
def ballistic(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2), c: wp.array(dtype=float), dt: float,
              x_out: wp.array(dtype=wp.vec2), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    vi = v[i]
    a = wp.vec2(0.0, -9.81) - c[i] * wp.length(vi) * vi
    v_new = vi + dt * a
    v_out[i] = v_new
    x_out[i] = x[i] + dt * v_new


@wp.kernel
def frame_error(x: wp.array(dtype=wp.vec2), ref: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - ref[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def launch_state():
    x0 = np.zeros((N, 2))
    v0 = np.stack([np.linspace(6.0, 9.0, N), np.linspace(8.0, 5.0, N)], axis=1)
    return x0, v0


C_TRUE = np.array([0.05, 0.12, 0.08, 0.2])


def tracked_frames(c):
    x, v = launch_state()
    frames = []
    for w in range(WINDOWS):
        for _ in range(WSTEPS):
            sp = np.linalg.norm(v, axis=1)
            v = v + DT * (np.array([0.0, -9.81]) - (c * sp)[:, None] * v)
            x = x + DT * v
        frames.append(x.copy())
    return frames


def main(iters=15):
    frames = [wp.array(f, dtype=wp.vec2) for f in tracked_frames(C_TRUE)]
    x0_np, v0_np = launch_state()
    c = wp.array(np.full(N, 0.1), dtype=float, requires_grad=True)
    opt = warp.optim.SGD([c], lr=2.0e-3)
    for it in range(iters):
        x = wp.array(x0_np, dtype=wp.vec2, requires_grad=True)
        v = wp.array(v0_np, dtype=wp.vec2, requires_grad=True)
        total = 0.0
        for w in range(WINDOWS):
            loss = wp.zeros(1, dtype=float, requires_grad=True)
            tape = wp.Tape()
            with tape:
                xs, vs = x, v
                for _ in range(WSTEPS):
                    xn = wp.empty(N, dtype=wp.vec2, requires_grad=True)
                    vn = wp.empty(N, dtype=wp.vec2, requires_grad=True)
                    wp.launch(ballistic, dim=N, inputs=[xs, vs, c, DT], outputs=[xn, vn])
                    xs, vs = xn, vn
                wp.launch(frame_error, dim=N, inputs=[xs, frames[w]], outputs=[loss])
            tape.backward(loss)
            total += float(loss.numpy()[0])
            x = wp.clone(xs, requires_grad=True)
            v = wp.clone(vs, requires_grad=True)
        opt.step([c.grad])
        c.grad.zero_()
        if it % 3 == 0:
            print(f"iter {it:3d} loss {total:.6e} c {np.round(c.numpy(), 4)}")


if __name__ == "__main__":
    main()
