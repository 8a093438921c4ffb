"""Tune spring rate and damping of four quarter-car suspensions for ride comfort over a speed bump.

Objective: mean squared body acceleration plus a penalty on suspension travel.
"""
import numpy as np
import warp as wp
import warp.optim

wp.init()

CARS = 4
STEPS = 60
DT = 0.01
TRAVEL_WEIGHT = 400.0


@wp.kernel
def body_step(z: wp.array(dtype=float), vz: wp.array(dtype=float), k: wp.array(dtype=float),
              c: wp.array(dtype=float), mass: wp.array(dtype=float), road: float, road_rate: float, dt: float,
              z_out: wp.array(dtype=float), vz_out: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    a = (-k[i] * (z[i] - road) - c[i] * (vz[i] - road_rate)) / mass[i]
    v = vz[i] + dt * a
    vz_out[i] = v
    z_out[i] = z[i] + dt * v
    acc[i] = a


@wp.kernel
def ride_cost(acc: wp.array(dtype=float), z: wp.array(dtype=float), road: float, w_acc: float, w_travel: float,
              loss: wp.array(dtype=float)):
    i = wp.tid()
    travel = z[i] - road
    wp.atomic_add(loss, 0, w_acc * acc[i] * acc[i] + w_travel * travel * travel)


@wp.kernel
def natural_frequency(k: wp.array(dtype=float), mass: wp.array(dtype=float), freq: wp.array(dtype=float)):
    i = wp.tid()
    freq[i] = wp.sqrt(k[i] / mass[i]) / (2.0 * wp.pi)


def bump(t):
    s = t * DT
    if 0.1 < s < 0.3:
        h = 0.05 * np.sin(np.pi * (s - 0.1) / 0.2) ** 2
        rate = 0.05 * np.pi / 0.2 * np.sin(2.0 * np.pi * (s - 0.1) / 0.2)
        return float(h), float(rate)
    return 0.0, 0.0


class SuspensionTuner:
    def __init__(self, masses, k0, c0, lr=0.5):
        self.mass = wp.array(masses, dtype=float)
        self.k = wp.array(k0, dtype=float, requires_grad=True)
        self.c = wp.array(c0, dtype=float, requires_grad=True)
        self.freq = wp.zeros(CARS, dtype=float)
        self.zs = [wp.zeros(CARS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
        self.vs = [wp.zeros(CARS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
        self.accs = [wp.zeros(CARS, dtype=float, requires_grad=True) for _ in range(STEPS)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)
        self.tape = wp.Tape()
        self.opt = warp.optim.Adam([self.k, self.c], lr=lr)

    def rollout(self):
        w_acc = 1.0 / (STEPS * CARS)
        w_travel = TRAVEL_WEIGHT / (STEPS * CARS)
        for t in range(STEPS):
            road, rate = bump(t)
            wp.launch(body_step, dim=CARS, inputs=[self.zs[t], self.vs[t], self.k, self.c, self.mass, road, rate, DT],
                      outputs=[self.zs[t + 1], self.vs[t + 1], self.accs[t]])
            road1, _ = bump(t + 1)
            wp.launch(ride_cost, dim=CARS, inputs=[self.accs[t], self.zs[t + 1], road1, w_acc, w_travel],
                      outputs=[self.loss])

    def train_step(self):
        wp.launch(natural_frequency, dim=CARS, inputs=[self.k, self.mass], outputs=[self.freq])
        self.tape.reset()
        self.loss.zero_()
        with self.tape:
            self.rollout()
        self.tape.backward(self.loss)
        self.opt.step([self.k.grad, self.c.grad])
        return float(self.loss.numpy()[0]), self.freq.numpy().copy()


def main():
    tuner = SuspensionTuner(np.array([1.0, 1.3, 0.8, 1.1], dtype=np.float32),
                            np.full(CARS, 40.0, dtype=np.float32), np.full(CARS, 3.0, dtype=np.float32))
    for it in range(40):
        value, freq = tuner.train_step()
        if it % 5 == 0 or it == 39:
            print(f"iter {it:3d}  loss {value:.6e}  f_n {np.round(freq, 3)}")
    print("k", np.round(tuner.k.numpy(), 2), "c", np.round(tuner.c.numpy(), 3))


if __name__ == "__main__":
    main()
