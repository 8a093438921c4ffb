import argparse

import numpy as np
import warp as wp

OMEGA = wp.constant(wp.vec3d(1.9323, 2.0, 1.0027))


@wp.kernel
def tide_level(
    hours: wp.array(dtype=wp.float64),
    amp: wp.array(dtype=wp.vec3d),
    phase: wp.array(dtype=wp.vec3d),
    mean_level: wp.array(dtype=wp.float64),
    samples: int,
    level: wp.array(dtype=wp.float64),
):
    tid = wp.tid()
    g = tid // samples
    t = hours[tid] * wp.float64(0.2617993877991494)
    h = mean_level[g]
    for c in range(3):
        h += amp[g][c] * wp.cos(OMEGA[c] * t - phase[g][c])
    level[tid] = h


@wp.kernel
def residual(level: wp.array(dtype=wp.float64), observed: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    d = level[tid] - observed[tid]
    wp.atomic_add(loss, 0, d * d)


class TideModel:
    def __init__(self, gauges, samples, seed):
        rng = np.random.default_rng(seed)
        hours = np.tile(np.sort(rng.uniform(0.0, 72.0, samples)), gauges)
        amp = rng.uniform([0.8, 0.2, 0.1], [1.6, 0.5, 0.3], (gauges, 3))
        ph = rng.uniform(0.0, 2.0 * np.pi, (gauges, 3))
        mean = rng.uniform(2.0, 3.0, gauges)
        om = np.array([1.9323, 2.0, 1.0027])
        t = hours.reshape(gauges, samples) * 0.2617993877991494
        obs = mean[:, None] + (amp[:, None, :] * np.cos(om[None, None, :] * t[:, :, None] - ph[:, None, :])).sum(-1)
        obs += rng.normal(0.0, 0.02, obs.shape)
        self.samples = samples
        self.hours = wp.array(hours, dtype=wp.float64)
        self.observed = wp.array(obs.ravel(), dtype=wp.float64)
        self.amp = wp.array(np.tile([1.0, 0.3, 0.2], (gauges, 1)), dtype=wp.vec3d, requires_grad=True)
        self.phase = wp.array(ph + rng.normal(0.0, 0.3, ph.shape), dtype=wp.vec3d, requires_grad=True)
        self.mean_level = wp.array(np.full(gauges, 2.5), dtype=wp.float64, requires_grad=True)

    def parameters(self):
        return [self.amp, self.phase, self.mean_level]

    def loss(self):
        level = wp.zeros_like(self.observed)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        n = self.observed.shape[0]
        wp.launch(tide_level, dim=n, inputs=[self.hours, self.amp, self.phase, self.mean_level, self.samples], outputs=[level])
        wp.launch(residual, dim=n, inputs=[level, self.observed], outputs=[loss])
        return loss


def fit(model, iters, lr):
    for it in range(iters):
        tape = wp.Tape()
        with tape:
            loss = model.loss()
        tape.backward(loss)
        for p in model.parameters():
            p.assign(p.numpy() - lr * p.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  sse {loss.numpy()[0]:.5f}")


def main():
    ap = argparse.ArgumentParser(description="fit M2/S2/K1 tidal constituents at several gauges")
    ap.add_argument("--gauges", type=int, default=3)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    model = TideModel(args.gauges, args.samples, args.seed)
    fit(model, args.iters, args.lr)
    print("amplitudes", np.round(model.amp.numpy(), 3))


if __name__ == "__main__":
    main()
