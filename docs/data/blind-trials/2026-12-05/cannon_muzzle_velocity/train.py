"""Aim six mortar shells (muzzle velocity vectors) to land on their targets after a 1.6 s flight,
with linear air drag. The velocities are kept in two buffers written alternately by the update."""
import numpy as np
import warp as wp

wp.init()

SHELLS = 6
STEPS = 40
DT = 0.04
DRAG = 0.15


@wp.kernel
def set_muzzle(v0: wp.array(dtype=wp.vec2), x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    x[i] = wp.vec2(0.0, 0.0)
    v[i] = v0[i]


@wp.kernel
def flight(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2), drag: float, dt: float,
           x_out: wp.array(dtype=wp.vec2), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    a = wp.vec2(0.0, -9.81) - drag * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def miss_distance(x: wp.array(dtype=wp.vec2), target: wp.array(dtype=wp.vec2), w: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, w * wp.dot(d, d))


@wp.kernel
def aim_update(v_now: wp.array(dtype=wp.vec2), g: wp.array(dtype=wp.vec2), lr: float, v_next: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    v_next[i] = v_now[i] - lr * g[i]


def main():
    targets = np.array([[20.0, 0.0], [25.0, 1.0], [30.0, -0.5], [18.0, 2.0], [35.0, 0.0], [28.0, 3.0]],
                       dtype=np.float32)
    target = wp.array(targets, dtype=wp.vec2)
    v_a = wp.array(np.tile(np.array([15.0, 8.0], dtype=np.float32), (SHELLS, 1)), dtype=wp.vec2, requires_grad=True)
    v_b = wp.zeros(SHELLS, dtype=wp.vec2, requires_grad=True)
    xs = [wp.zeros(SHELLS, dtype=wp.vec2, requires_grad=True) for _ in range(STEPS + 1)]
    vs = [wp.zeros(SHELLS, dtype=wp.vec2, requires_grad=True) for _ in range(STEPS + 1)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)

    for it in range(30):
        loss.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(set_muzzle, dim=SHELLS, inputs=[v_a], outputs=[xs[0], vs[0]])
            for t in range(STEPS):
                wp.launch(flight, dim=SHELLS, inputs=[xs[t], vs[t], DRAG, DT], outputs=[xs[t + 1], vs[t + 1]])
            wp.launch(miss_distance, dim=SHELLS, inputs=[xs[STEPS], target, 1.0 / SHELLS], outputs=[loss])
        tape.backward(loss)
        wp.launch(aim_update, dim=SHELLS, inputs=[v_a, v_a.grad, 0.2], outputs=[v_b])
        tape.zero()
        v_a, v_b = v_b, v_a
        if it % 5 == 0 or it == 29:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("muzzle velocities", np.round(v_a.numpy(), 3))


if __name__ == "__main__":
    main()
