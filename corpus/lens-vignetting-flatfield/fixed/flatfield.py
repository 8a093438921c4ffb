import argparse

import numpy as np
import warp as wp


@wp.kernel
def vignette(
    coeffs: wp.array(dtype=wp.float64),
    radius2: wp.array(dtype=wp.float64),
    pred: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r2 = radius2[i]
    pred[i] = coeffs[0] * (wp.float64(1.0) + r2 * (coeffs[1] + r2 * (coeffs[2] + r2 * coeffs[3])))


@wp.kernel
def mse(pred: wp.array(dtype=wp.float64), frame: wp.array(dtype=wp.float64), inv_n: wp.float64, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = pred[i] - frame[i]
    wp.atomic_add(loss, 0, d * d * inv_n)


class FlatFieldCalibrator:
    def __init__(self, size, seed):
        rng = np.random.default_rng(seed)
        ys, xs = np.mgrid[0:size, 0:size]
        r2 = (((xs - size / 2 + 0.5) / (size / 2)) ** 2 + ((ys - size / 2 + 0.5) / (size / 2)) ** 2) / 2.0
        r2 = r2.ravel()
        truth = 0.92 * (1.0 + r2 * (-0.35 + r2 * (0.08 + r2 * -0.02)))
        frame = truth + rng.normal(0.0, 0.01, r2.shape)
        self.n = r2.size
        self.radius2 = wp.array(r2, dtype=wp.float64)
        self.frame = wp.array(frame, dtype=wp.float64)
        self.coeffs = wp.array([1.0, 0.0, 0.0, 0.0], dtype=wp.float64, requires_grad=True)
        self.pred = wp.zeros(self.n, dtype=wp.float64, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        self.tape = wp.Tape()

    def forward(self):
        self.loss.zero_()
        wp.launch(vignette, dim=self.n, inputs=[self.coeffs, self.radius2], outputs=[self.pred])
        wp.launch(mse, dim=self.n, inputs=[self.pred, self.frame, wp.float64(1.0 / self.n)], outputs=[self.loss])
        return self.loss

    def step(self, lr):
        with self.tape:
            loss = self.forward()
        self.tape.backward(loss)
        self.coeffs.assign(self.coeffs.numpy() - lr * self.coeffs.grad.numpy())
        self.tape.zero()
        self.tape.reset()
        return loss.numpy()[0]


def main():
    ap = argparse.ArgumentParser(description="fit a radial vignetting model to a flat-field frame")
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=9)
    args = ap.parse_args()
    cal = FlatFieldCalibrator(args.size, args.seed)
    for it in range(args.iters):
        loss = cal.step(args.lr)
        if it % 10 == 0:
            print(f"iter {it:4d}  mse {loss:.3e}")
    print("coefficients", cal.coeffs.numpy())


if __name__ == "__main__":
    main()
