import warp as wp


@wp.kernel
def fix_residuals(
    pos: wp.array(dtype=wp.vec2d),
    fixes: wp.array(dtype=wp.vec2d),
    sigma: wp.array(dtype=wp.float64),
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = (pos[i] - fixes[i]) / sigma[i]
    out[i] = wp.dot(d, d)


@wp.kernel
def curvature_terms(pos: wp.array(dtype=wp.vec2d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = pos[i]
    b = pos[i + 1]
    c = pos[i + 2]
    k = a - wp.float64(2.0) * b + c
    out[i] = wp.dot(k, k)


class TrackModel:
    def __init__(self, fixes, sigma, init, device):
        self.device = device
        self.n = fixes.shape[0]
        self.fixes = wp.array(fixes, dtype=wp.vec2d, device=device)
        self.sigma = wp.array(sigma, dtype=wp.float64, device=device)
        self.pos = wp.array(init, dtype=wp.vec2d, requires_grad=True, device=device)

    def terms(self):
        fit = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        curv = wp.zeros(self.n - 2, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(fix_residuals, dim=self.n, inputs=[self.pos, self.fixes, self.sigma], outputs=[fit], device=self.device)
        wp.launch(curvature_terms, dim=self.n - 2, inputs=[self.pos], outputs=[curv], device=self.device)
        return fit, curv
