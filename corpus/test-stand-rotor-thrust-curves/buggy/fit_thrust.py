import argparse

import numpy as np
import warp as wp


@wp.kernel
def thrust_residual(
    coef: wp.array(dtype=wp.float64),
    rpm: wp.array(dtype=wp.float64),
    motor: wp.array(dtype=wp.int32),
    thrust: wp.array(dtype=wp.float64),
    r2: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    m = motor[i]
    w = rpm[i]
    pred = coef[m * 3] + coef[m * 3 + 1] * w + coef[m * 3 + 2] * w * w
    d = pred - thrust[i]
    r2[i] = d * d


class ThrustFit:
    def __init__(self, motors, per_motor, seed):
        rng = np.random.default_rng(seed)
        n = motors * per_motor
        rpm = rng.uniform(0.2, 1.0, n)
        motor = np.repeat(np.arange(motors), per_motor).astype(np.int32)
        true = rng.uniform([0.0, 0.2, 1.5], [0.05, 0.5, 2.5], (motors, 3))
        noise = rng.uniform(0.01, 0.05, n)
        thrust = true[motor, 0] + true[motor, 1] * rpm + true[motor, 2] * rpm**2 + rng.normal(0.0, 1.0, n) * noise
        w = 1.0 / noise**2
        self.n = n
        self.rpm = wp.array(rpm, dtype=wp.float64)
        self.motor = wp.array(motor, dtype=wp.int32)
        self.thrust = wp.array(thrust, dtype=wp.float64)
        self.w = w / w.sum()
        self.weights = wp.array(self.w, dtype=wp.float64)
        self.coef = wp.array(np.tile([0.0, 0.3, 1.8], motors), dtype=wp.float64, requires_grad=True)

    def residuals(self):
        r2 = wp.zeros(self.n, dtype=wp.float64, requires_grad=True)
        wp.launch(thrust_residual, dim=self.n, inputs=[self.coef, self.rpm, self.motor, self.thrust], outputs=[r2])
        return r2

    def weighted_loss(self, r2):
        return float(np.dot(self.w, r2.numpy()))

    def step(self, lr):
        tape = wp.Tape()
        with tape:
            r2 = self.residuals()
        r2.grad = self.weights
        tape.backward()
        self.coef.assign(self.coef.numpy() - lr * self.coef.grad.numpy())
        tape.zero()
        return self.weighted_loss(r2)


def main():
    ap = argparse.ArgumentParser(description="weighted fit of rotor thrust curves from test-stand samples")
    ap.add_argument("--motors", type=int, default=4)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.8)
    ap.add_argument("--seed", type=int, default=31)
    args = ap.parse_args()
    fit = ThrustFit(args.motors, args.samples, args.seed)
    for it in range(args.iters):
        loss = fit.step(args.lr)
        if it % 10 == 0:
            print(f"iter {it:3d}  weighted mse {loss:.3e}")
    print(fit.coef.numpy().reshape(args.motors, 3))


if __name__ == "__main__":
    main()
