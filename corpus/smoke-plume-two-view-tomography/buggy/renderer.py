import numpy as np
import warp as wp

import volume


class TwoViewRenderer:
    def __init__(self, res, device="cpu", seed=21, prior_weight=1.0e-3):
        self.res, self.device = res, device
        self.ds = 1.0 / res
        self.backlight = 1.0
        self.prior_mean = -1.0
        self.prior_weight = prior_weight
        rng = np.random.default_rng(seed)
        yy, xx = np.mgrid[0:res, 0:res] / (res - 1.0)
        blob = 3.0 * np.exp(-((xx - 0.45) ** 2 + (yy - 0.6) ** 2) / 0.05) + 0.2
        self.obs_rows = wp.array((np.exp(-blob.sum(axis=1) * self.ds) + 0.01 * rng.standard_normal(res)).astype(np.float32), device=device)
        self.obs_cols = wp.array((np.exp(-blob.sum(axis=0) * self.ds) + 0.01 * rng.standard_normal(res)).astype(np.float32), device=device)
        self.sigma = wp.zeros((res, res), dtype=float, device=device, requires_grad=True)
        self.depth_rows = wp.zeros(res, dtype=float, device=device, requires_grad=True)
        self.depth_cols = wp.zeros(res, dtype=float, device=device, requires_grad=True)
        self.img_rows = wp.zeros(res, dtype=float, device=device, requires_grad=True)
        self.img_cols = wp.zeros(res, dtype=float, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=float, device=device, requires_grad=True)

    def render_loss(self, raw):
        n = self.res
        for a in (self.depth_rows, self.depth_cols, self.loss):
            a.zero_()
        wp.launch(volume.densities, dim=(n, n), inputs=[raw, self.prior_mean, self.prior_weight], outputs=[self.sigma, self.loss], device=self.device)
        wp.launch(volume.march, dim=(n, n), inputs=[self.sigma, self.ds], outputs=[self.depth_rows, self.depth_cols], device=self.device)
        w = 1.0 / n
        wp.launch(volume.shade, dim=n, inputs=[self.depth_rows, self.backlight, self.img_rows, self.obs_rows, w, self.loss], device=self.device)
        wp.launch(volume.shade, dim=n, inputs=[self.depth_cols, self.backlight, self.img_cols, self.obs_cols, w, self.loss], device=self.device)
        return self.loss
