import warp as wp


@wp.kernel
def splat(
    centers: wp.array(dtype=wp.vec2d),
    log_sigma: wp.array(dtype=wp.float64),
    amplitude: wp.array(dtype=wp.float64),
    width: int,
    image: wp.array2d(dtype=wp.float64),
):
    p, b = wp.tid()
    row = p // width
    col = p - row * width
    h = wp.float64(1.0) / wp.float64(width)
    pix = wp.vec2d((wp.float64(col) + wp.float64(0.5)) * h, (wp.float64(row) + wp.float64(0.5)) * h)
    d = pix - centers[b]
    s = wp.exp(log_sigma[b])
    val = amplitude[b] * wp.exp(wp.float64(-0.5) * wp.dot(d, d) / (s * s))
    wp.atomic_add(image, row, col, val)


@wp.kernel
def pixel_error(
    image: wp.array2d(dtype=wp.float64),
    photo: wp.array2d(dtype=wp.float64),
    err: wp.array2d(dtype=wp.float64),
):
    i, j = wp.tid()
    r = image[i, j] - photo[i, j]
    err[i, j] = r * r


class SplatRenderer:
    def __init__(self, size, device=None):
        self.size = size
        self.device = device

    def render(self, centers, log_sigma, amplitude):
        img = wp.zeros((self.size, self.size), dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(splat, dim=(self.size * self.size, centers.shape[0]),
                  inputs=[centers, log_sigma, amplitude, self.size], outputs=[img], device=self.device)
        return img

    def residual(self, img, photo):
        err = wp.zeros_like(img, requires_grad=True)
        wp.launch(pixel_error, dim=img.shape, inputs=[img, photo], outputs=[err], device=self.device)
        return err
