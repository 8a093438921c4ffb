import numpy as np
import warp as wp

PSF = np.array([[0.05, 0.1, 0.05], [0.1, 0.4, 0.1], [0.05, 0.1, 0.05]])


@wp.kernel
def render(
    img: wp.array2d(dtype=wp.float64),
    psf: wp.array2d(dtype=wp.float64),
    out: wp.array2d(dtype=wp.float64),
):
    i, j = wp.tid()
    h = img.shape[0]
    w = img.shape[1]
    acc = wp.float64(0.0)
    for di in range(3):
        for dj in range(3):
            ii = wp.clamp(i + di - 1, 0, h - 1)
            jj = wp.clamp(j + dj - 1, 0, w - 1)
            acc += psf[di, dj] * wp.clamp(img[ii, jj], wp.float64(0.0), wp.float64(1.0))
    out[i, j] = acc


@wp.kernel
def data_term(
    pred: wp.array2d(dtype=wp.float64),
    obs: wp.array2d(dtype=wp.float64),
    img: wp.array2d(dtype=wp.float64),
    smooth: wp.float64,
    rows: wp.array(dtype=wp.float64),
):
    i, j = wp.tid()
    r = pred[i, j] - obs[i, j]
    e = wp.float64(0.5) * r * r
    if j + 1 < img.shape[1]:
        d = img[i, j + 1] - img[i, j]
        e += smooth * d * d
    if i + 1 < img.shape[0]:
        d = img[i + 1, j] - img[i, j]
        e += smooth * d * d
    wp.atomic_add(rows, i, e)


@wp.kernel
def total(rows: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    wp.atomic_add(loss, 0, rows[wp.tid()])


def synthetic_slide(h, w, seed=23, noise=0.02):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    truth = np.full((h, w), 0.15)
    for _ in range(max(4, h * w // 2000)):
        cy, cx = rng.uniform(0, h), rng.uniform(0, w)
        r = rng.uniform(3.0, 12.0)
        truth += rng.uniform(0.3, 0.9) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
    truth = np.clip(truth, 0.0, 1.0)
    pad = np.pad(truth, 1, mode="edge")
    blurred = sum(PSF[a, b] * pad[a : a + h, b : b + w] for a in range(3) for b in range(3))
    return truth, blurred + noise * rng.standard_normal((h, w))


class Deblur:
    def __init__(self, obs, smooth=0.02, device="cpu"):
        self.device = device
        self.shape = obs.shape
        self.obs = wp.array(obs, dtype=wp.float64, device=device)
        self.psf = wp.array(PSF, dtype=wp.float64, device=device)
        self.smooth = wp.float64(smooth)
        self.pred = wp.zeros(self.shape, dtype=wp.float64, device=device, requires_grad=True)
        self.rows = wp.zeros(self.shape[0], dtype=wp.float64, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def forward(self, img):
        self.rows.zero_()
        self.loss.zero_()
        wp.launch(render, dim=self.shape, inputs=[img, self.psf], outputs=[self.pred], device=self.device)
        wp.launch(data_term, dim=self.shape, inputs=[self.pred, self.obs, img, self.smooth], outputs=[self.rows], device=self.device)
        wp.launch(total, dim=self.shape[0], inputs=[self.rows], outputs=[self.loss], device=self.device)
        return self.loss
