"""Tune a shared PI thermostat (kp, ki) across a batch of rooms by differentiating through the closed loop."""
import argparse

import numpy as np
import warp as wp

wp.config.quiet = True

AMBIENT = 10.0
COOLING = 0.3
HEATER = 1.5
U_MAX = 8.0


@wp.kernel
def plant_step(
    temp: wp.array(dtype=float),
    integ: wp.array(dtype=float),
    setpoint: wp.array(dtype=float),
    gains: wp.array(dtype=float),
    dt: float,
    inv_count: float,
    temp_out: wp.array(dtype=float),
    integ_out: wp.array(dtype=float),
    cost: wp.array(dtype=float),
):
    i = wp.tid()
    e = setpoint[i] - temp[i]
    acc = integ[i] + e * dt
    u = U_MAX * wp.tanh((gains[0] * e + gains[1] * acc) / U_MAX)
    temp_out[i] = temp[i] + dt * (-COOLING * (temp[i] - AMBIENT) + HEATER * u)
    integ_out[i] = acc
    wp.atomic_add(cost, 0, e * e * inv_count)


@wp.kernel
def gradient_step(params: wp.array(dtype=float), grad: wp.array(dtype=float), lr: float):
    i = wp.tid()
    params[i] = params[i] - lr * grad[i]


def make_rooms(n, seed=3):
    rng = np.random.default_rng(seed)
    temp0 = rng.uniform(12.0, 18.0, size=n)
    setpoint = rng.uniform(19.0, 23.0, size=n)
    return temp0, setpoint


class ClosedLoop:
    def __init__(self, rooms, horizon, dt):
        self.rooms, self.horizon, self.dt = rooms, horizon, dt
        temp0, setpoint = make_rooms(rooms)
        self.setpoint = wp.array(setpoint, dtype=float)
        self.temps = [wp.array(temp0, dtype=float, requires_grad=True)]
        self.temps += [wp.zeros(rooms, dtype=float, requires_grad=True) for _ in range(horizon)]
        self.integs = [wp.zeros(rooms, dtype=float, requires_grad=True) for _ in range(horizon + 1)]
        self.cost = wp.zeros(1, dtype=float, requires_grad=True)

    def rollout(self, gains):
        self.cost.zero_()
        inv_count = 1.0 / float(self.rooms * self.horizon)
        for t in range(self.horizon):
            wp.launch(
                plant_step,
                dim=self.rooms,
                inputs=[self.temps[t], self.integs[t], self.setpoint, gains, self.dt, inv_count],
                outputs=[self.temps[t + 1], self.integs[t + 1], self.cost],
            )
        return self.cost


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--rooms", type=int, default=16)
    parser.add_argument("--horizon", type=int, default=25)
    parser.add_argument("--dt", type=float, default=0.1)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.02)
    args = parser.parse_args(argv)

    loop = ClosedLoop(args.rooms, args.horizon, args.dt)
    gains = wp.array([0.5, 0.1], dtype=float, requires_grad=True)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            cost = loop.rollout(gains)
        tape.backward(cost)
        wp.launch(gradient_step, dim=2, inputs=[gains, gains.grad, args.lr])
        if it % 5 == 0:
            kp, ki = gains.numpy()
            print(f"it {it:3d} cost {cost.numpy()[0]:.4f} kp {kp:.3f} ki {ki:.3f}")


if __name__ == "__main__":
    main()
