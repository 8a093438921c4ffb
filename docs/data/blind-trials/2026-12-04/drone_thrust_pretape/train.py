"""Tune per-drone thrust gain and drag so a swarm of point drones reaches its hover targets."""
import numpy as np
import warp as wp

N = 6
STEPS = 50
DT = 0.02
GRAVITY = wp.constant(wp.vec2(0.0, -9.81))


@wp.kernel
def thrust_from_gain(gain: wp.array(dtype=float), heading: wp.array(dtype=wp.vec2), thrust: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    thrust[i] = gain[i] * heading[i]


@wp.kernel
def step(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2), thrust: wp.array(dtype=wp.vec2),
         drag: wp.array(dtype=float), dt: float,
         x_out: wp.array(dtype=wp.vec2), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    vi = v[i]
    a = thrust[i] + GRAVITY - drag[i] * wp.length(vi) * vi
    v_new = vi + dt * a
    v_out[i] = v_new
    x_out[i] = x[i] + dt * v_new


@wp.kernel
def distance_to_goal(x: wp.array(dtype=wp.vec2), goal: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - goal[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


@wp.kernel
def sgd(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, lo: float):
    i = wp.tid()
    p[i] = wp.max(p[i] - lr * g[i], lo)


def setup():
    rng = np.random.default_rng(3)
    ang = np.deg2rad(rng.uniform(70.0, 110.0, N))
    heading = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    goal = np.stack([rng.uniform(-0.4, 0.4, N), rng.uniform(0.8, 1.6, N)], axis=1)
    return heading, goal


def main(iters=20):
    heading_np, goal_np = setup()
    heading = wp.array(heading_np, dtype=wp.vec2)
    goal = wp.array(goal_np, dtype=wp.vec2)
    gain = wp.array(np.full(N, 12.0), dtype=float, requires_grad=True)
    drag = wp.array(np.full(N, 0.5), dtype=float, requires_grad=True)
    thrust = wp.zeros(N, dtype=wp.vec2, requires_grad=True)

    for it in range(iters):
        wp.launch(thrust_from_gain, dim=N, inputs=[gain, heading], outputs=[thrust])
        xs = [wp.zeros(N, dtype=wp.vec2, requires_grad=True) for _ in range(STEPS + 1)]
        vs = [wp.zeros(N, dtype=wp.vec2, requires_grad=True) for _ in range(STEPS + 1)]
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            for t in range(STEPS):
                wp.launch(step, dim=N, inputs=[xs[t], vs[t], thrust, drag, DT], outputs=[xs[t + 1], vs[t + 1]])
            wp.launch(distance_to_goal, dim=N, inputs=[xs[-1], goal], outputs=[loss])
        tape.backward(loss)
        wp.launch(sgd, dim=N, inputs=[gain, gain.grad, 0.5, 0.0])
        wp.launch(sgd, dim=N, inputs=[drag, drag.grad, 0.05, 0.0])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d} loss {loss.numpy()[0]:.5f} gain {gain.numpy().mean():.3f} drag {drag.numpy().mean():.3f}")


if __name__ == "__main__":
    main()
