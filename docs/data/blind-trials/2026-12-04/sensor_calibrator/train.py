"""Calibrate gain, offset and curvature of four thermistors against a reference probe."""
import numpy as np
import warp as wp

S = 4
J = 64


@wp.kernel
def residual_sq(raw: wp.array(dtype=float), sensor: wp.array(dtype=int), ref: wp.array(dtype=float),
                gain: wp.array(dtype=float), offset: wp.array(dtype=float), curv: wp.array(dtype=float),
                r2: wp.array(dtype=float)):
    j = wp.tid()
    s = sensor[j]
    u = raw[j]
    pred = gain[s] * u + offset[s] + curv[s] * u * u
    d = pred - ref[j]
    r2[j] = d * d


@wp.kernel
def sgd(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    p[i] = p[i] - lr * g[i]


class Calibrator:
    def __init__(self, raw, sensor, ref, lr=0.01):
        self.raw, self.sensor, self.ref = raw, sensor, ref
        self.gain = wp.array(np.ones(S), dtype=float, requires_grad=True)
        self.offset = wp.zeros(S, dtype=float, requires_grad=True)
        self.curv = wp.zeros(S, dtype=float, requires_grad=True)
        self.r2 = wp.zeros(J, dtype=float, requires_grad=True)
        self.seed = wp.ones(J, dtype=float)
        self.lr = lr

    def params(self):
        return [self.gain, self.offset, self.curv]

    def step(self):
        tape = wp.Tape()
        with tape:
            wp.launch(residual_sq, dim=J,
                      inputs=[self.raw, self.sensor, self.ref, self.gain, self.offset, self.curv],
                      outputs=[self.r2])
        tape.backward(grads={self.r2: self.seed})
        for p in self.params():
            wp.launch(sgd, dim=S, inputs=[p, p.grad, self.lr])
        tape.zero()
        return float(np.mean(self.r2.numpy()))


def readings():
    rng = np.random.default_rng(2)
    sensor = np.arange(J) % S
    raw = rng.uniform(0.0, 1.0, J)
    g = np.array([1.2, 0.9, 1.05, 1.3]); o = np.array([0.1, -0.2, 0.05, 0.0]); c = np.array([0.3, -0.1, 0.2, 0.0])
    ref = g[sensor] * raw + o[sensor] + c[sensor] * raw ** 2 + 0.01 * rng.standard_normal(J)
    return raw, sensor, ref


def main(iters=30):
    raw, sensor, ref = readings()
    cal = Calibrator(wp.array(raw, dtype=float), wp.array(sensor, dtype=int), wp.array(ref, dtype=float))
    for it in range(iters):
        mse = cal.step()
        if it % 5 == 0:
            print(f"iter {it:3d} mse {mse:.6e}")
    print("gain", cal.gain.numpy(), "offset", cal.offset.numpy())


if __name__ == "__main__":
    main()
