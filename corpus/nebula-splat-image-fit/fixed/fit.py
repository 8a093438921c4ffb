import argparse

import numpy as np
import warp as wp

from render import SplatRenderer


def synthetic_photo(size, n_blobs, rng):
    c = rng.uniform(0.2, 0.8, (n_blobs, 2))
    s = np.log(rng.uniform(0.05, 0.12, n_blobs))
    a = rng.uniform(0.5, 1.0, n_blobs)
    yy, xx = (np.mgrid[0:size, 0:size] + 0.5) / size
    img = np.zeros((size, size))
    for k in range(n_blobs):
        img += a[k] * np.exp(-0.5 * ((xx - c[k, 0]) ** 2 + (yy - c[k, 1]) ** 2) / np.exp(s[k]) ** 2)
    img += 0.01 * rng.standard_normal(img.shape)
    return img, (c, s, a)


class SplatFit:
    def __init__(self, size=48, n_blobs=8, seed=2024, device=None):
        rng = np.random.default_rng(seed)
        photo, (c, s, a) = synthetic_photo(size, n_blobs, rng)
        self.photo = wp.array(photo, dtype=wp.float64, device=device)
        self.renderer = SplatRenderer(size, device)
        self.device = device
        self.centers = wp.array(c + 0.05 * rng.standard_normal(c.shape), dtype=wp.vec2d,
                                device=device, requires_grad=True)
        self.log_sigma = wp.array(s + 0.2 * rng.standard_normal(s.shape), dtype=wp.float64,
                                  device=device, requires_grad=True)
        self.amplitude = wp.array(a * rng.uniform(0.7, 1.3, a.shape), dtype=wp.float64,
                                  device=device, requires_grad=True)

    def params(self):
        return {"centers": self.centers, "log_sigma": self.log_sigma, "amplitude": self.amplitude}

    def mse(self):
        img = self.renderer.render(self.centers, self.log_sigma, self.amplitude)
        return float(np.mean(self.renderer.residual(img, self.photo).numpy()))

    def grads(self):
        tape = wp.Tape()
        with tape:
            img = self.renderer.render(self.centers, self.log_sigma, self.amplitude)
            err = self.renderer.residual(img, self.photo)
        tape.backward(grads={err: wp.full(err.shape, 1.0 / err.size, dtype=wp.float64, device=self.device)})
        out = {k: v.grad.numpy().copy() for k, v in self.params().items()}
        tape.zero()
        return float(np.mean(err.numpy())), out

    def sgd(self, g, lr):
        for k, v in self.params().items():
            v.assign(v.numpy() - lr[k] * g[k])

    def run(self, iterations, lr=None, verbose=False):
        lr = lr or {"centers": 0.05, "log_sigma": 0.5, "amplitude": 0.5}
        losses = []
        for it in range(iterations):
            value, g = self.grads()
            self.sgd(g, lr)
            losses.append(value)
            if verbose and it % 20 == 0:
                print(f"iter {it:4d}  mse {value:.6f}")
        return losses


def main():
    parser = argparse.ArgumentParser(description="fit Gaussian splats to a nebula photo")
    parser.add_argument("--size", type=int, default=48)
    parser.add_argument("--blobs", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    wp.init()
    fit = SplatFit(args.size, args.blobs)
    fit.run(args.iterations, verbose=True)
    if args.out:
        import matplotlib.pyplot as plt
        img = fit.renderer.render(fit.centers, fit.log_sigma, fit.amplitude).numpy()
        fig, ax = plt.subplots(1, 2)
        ax[0].imshow(fit.photo.numpy())
        ax[1].imshow(img)
        fig.savefig(args.out)


if __name__ == "__main__":
    main()
