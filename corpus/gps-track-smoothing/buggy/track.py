import warp as wp


@wp.kernel
def reading_residuals(
    pos: wp.array(dtype=wp.vec2d),
    readings: wp.array(dtype=wp.vec2d),
    sigma: wp.array(dtype=wp.float64),
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = (pos[i] - readings[i]) / sigma[i]
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
    def __init__(self, readings, sigma, init, device):
        self.device = device
        self.n = readings.shape[0]
        self.readings = wp.array(readings, dtype=wp.vec2d, device=device)
        self.sigma = wp.array(sigma, dtype=wp.float64, device=device)
        self.pos = wp.array(init, dtype=wp.vec2d, requires_grad=True, device=device)

    def terms(self):
        fit = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        curv = wp.zeros(self.n - 2, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(reading_residuals, dim=self.n, inputs=[self.pos, self.readings, self.sigma], outputs=[fit], device=self.device)
        wp.launch(curvature_terms, dim=self.n - 2, inputs=[self.pos], outputs=[curv], device=self.device)
        return fit, curv
