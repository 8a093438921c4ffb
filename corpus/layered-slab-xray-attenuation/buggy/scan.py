import numpy as np
import warp as wp

import tomo


class SlabScan:
    def __init__(self, n_rays=24, seed=4, device=None):
        rng = np.random.default_rng(seed)
        n_layers = 8
        self.device = device
        thickness = rng.uniform(0.5, 1.5, n_layers)
        angles = np.linspace(-1.0, 1.0, n_rays)
        path = thickness[None, :] / np.cos(angles)[:, None]
        self.mu_true = rng.uniform(0.05, 0.3, n_layers)
        source = rng.uniform(0.8, 1.2, n_rays)
        counts = source * np.exp(-(path * self.mu_true[None, :]).sum(axis=1))
        counts *= 1.0 + 0.005 * rng.standard_normal(n_rays)
        self.path = wp.array(path, dtype=wp.float64, device=device)
        self.source = wp.array(source, dtype=wp.float64, device=device)
        self.counts = wp.array(counts, dtype=wp.float64, device=device)
        self.n_rays = n_rays

    def predict(self, mu):
        flux = wp.zeros(self.n_rays, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(tomo.transmit, dim=self.n_rays, inputs=[self.source, mu, self.path], outputs=[flux],
                  device=self.device)
        return flux

    def misfit(self, mu):
        flux = self.predict(mu)
        out = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(tomo.detector_misfit, dim=self.n_rays,
                  inputs=[flux, self.counts, wp.float64(1.0 / self.n_rays)], outputs=[out], device=self.device)
        return out
