import argparse

import numpy as np
import warp as wp


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    k: wp.array(dtype=wp.float64),
    c: wp.array(dtype=wp.float64),
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    a = -k[i] * x[i] - c[i] * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def track_error(x: wp.array(dtype=wp.float64), obs: wp.array2d(dtype=wp.float64), t: int, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - obs[t, i]
    wp.atomic_add(loss, 0, d * d)


class Simulator:
    def __init__(self, x0, v0, steps, dt):
        n = len(x0)
        self.steps = steps
        self.dt = dt
        self.x = [wp.array(x0, dtype=wp.float64, requires_grad=True)]
        self.v = [wp.array(v0, dtype=wp.float64, requires_grad=True)]
        for _ in range(steps):
            self.x.append(wp.zeros(n, dtype=wp.float64, requires_grad=True))
            self.v.append(wp.zeros(n, dtype=wp.float64, requires_grad=True))

    def loss(self, k, c, obs):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        n = k.shape[0]
        for t in range(self.steps):
            wp.launch(integrate, dim=n, inputs=[self.x[t], self.v[t], k, c, wp.float64(self.dt)], outputs=[self.x[t + 1], self.v[t + 1]])
            wp.launch(track_error, dim=n, inputs=[self.x[t + 1], obs, t, loss])
        return loss


def make_data(sensors, steps, dt, seed):
    rng = np.random.default_rng(seed)
    x0 = rng.uniform(-1.0, 1.0, sensors)
    v0 = rng.uniform(-0.5, 0.5, sensors)
    k = rng.uniform(2.0, 6.0, sensors)
    c = rng.uniform(0.1, 0.6, sensors)
    xs, x, v = [], x0.copy(), v0.copy()
    for _ in range(steps):
        v = v + dt * (-k * x - c * v)
        x = x + dt * v
        xs.append(x.copy())
    obs = np.array(xs) + rng.normal(0.0, 0.01, (steps, sensors))
    return x0, v0, k, c, obs


def main():
    ap = argparse.ArgumentParser(description="identify stiffness and damping of floor vibration sensors")
    ap.add_argument("--sensors", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--dt", type=float, default=0.05)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=77)
    args = ap.parse_args()

    x0, v0, k_true, c_true, obs_np = make_data(args.sensors, args.steps, args.dt, args.seed)
    obs = wp.array(obs_np, dtype=wp.float64)
    sim = Simulator(x0, v0, args.steps, args.dt)
    k = wp.array(np.full(args.sensors, 4.0), dtype=wp.float64, requires_grad=True)
    c = wp.array(np.full(args.sensors, 0.3), dtype=wp.float64, requires_grad=True)
    k_ref = wp.array(k_true, dtype=wp.float64)
    c_ref = wp.array(c_true, dtype=wp.float64)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = sim.loss(k, c, obs)
        tape.backward(loss)
        ref_loss = sim.loss(k_ref, c_ref, obs)
        for p in (k, c):
            p.assign(p.numpy() - args.lr * p.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.5f}  (reference parameters {ref_loss.numpy()[0]:.5f})")


if __name__ == "__main__":
    main()
