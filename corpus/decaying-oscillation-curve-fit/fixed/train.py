"""Fit a damped oscillation y = A exp(-k t) sin(w t + phi) with heavy-ball momentum gradient descent."""
import argparse

import numpy as np
import warp as wp

wp.config.quiet = True


@wp.kernel
def predict(params: wp.array(dtype=float), ts: wp.array(dtype=float), pred: wp.array(dtype=float)):
    i = wp.tid()
    t = ts[i]
    pred[i] = params[0] * wp.exp(-params[1] * t) * wp.sin(params[2] * t + params[3])


@wp.kernel
def mean_sq_error(pred: wp.array(dtype=float), ys: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    r = pred[i] - ys[i]
    wp.atomic_add(loss, 0, r * r / float(ys.shape[0]))


@wp.kernel
def update_velocity(vel: wp.array(dtype=float), grad: wp.array(dtype=float), lr: float, beta: float):
    i = wp.tid()
    vel[i] = beta * vel[i] - lr * grad[i]


@wp.kernel
def apply_velocity(params: wp.array(dtype=float), vel: wp.array(dtype=float)):
    i = wp.tid()
    params[i] = params[i] + vel[i]


def make_measurements(n=50, seed=4):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 3.0, n)
    amp, decay, omega, phase = 1.5, 0.5, 3.0, 0.4
    y = amp * np.exp(-decay * t) * np.sin(omega * t + phase) + 0.02 * rng.normal(size=n)
    return t, y


INITIAL_GUESS = [1.0, 0.3, 2.6, 0.0]


class WaveModel:
    def __init__(self, n=50):
        t, y = make_measurements(n)
        self.n = n
        self.ts = wp.array(t, dtype=float)
        self.ys = wp.array(y, dtype=float)
        self.params = wp.array(INITIAL_GUESS, dtype=float, requires_grad=True)
        self.pred = wp.zeros(n, dtype=float, requires_grad=True)
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def forward(self):
        self.loss.zero_()
        wp.launch(predict, dim=self.n, inputs=[self.params, self.ts], outputs=[self.pred])
        wp.launch(mean_sq_error, dim=self.n, inputs=[self.pred, self.ys], outputs=[self.loss])
        return self.loss


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=150)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--beta", type=float, default=0.8)
    args = parser.parse_args(argv)

    model = WaveModel()
    vel = wp.zeros(4, dtype=float)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = model.forward()
        tape.backward(loss)
        wp.launch(update_velocity, dim=4, inputs=[vel, model.params.grad, args.lr, args.beta])
        wp.launch(apply_velocity, dim=4, inputs=[model.params, vel])
        tape.zero()
        if it % 25 == 0:
            print(f"{it:4d}  loss {loss.numpy()[0]:.6f}  params {np.array2string(model.params.numpy(), precision=3)}")


if __name__ == "__main__":
    main()
