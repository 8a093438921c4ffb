import numpy as np
import warp as wp

TAU = 0.05


@wp.func
def inside(d: wp.float64):
    if d > wp.float64(0.0):
        return wp.float64(1.0)
    return wp.float64(0.0)


@wp.func_grad(inside)
def adj_inside(d: wp.float64, adj_ret: wp.float64):
    s = wp.float64(1.0) / (wp.float64(1.0) + wp.exp(-d / wp.float64(TAU)))
    wp.adjoint[d] += adj_ret * s * (wp.float64(1.0) - s) / wp.float64(TAU)


@wp.kernel
def render(
    pixels: wp.array(dtype=wp.vec2d),
    centre: wp.array(dtype=wp.vec2d),
    radius: wp.array(dtype=wp.float64),
    image: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    empty = wp.float64(1.0)
    for k in range(4):
        d = radius[k] - wp.length(pixels[p] - centre[k])
        empty = empty * (wp.float64(1.0) - inside(d))
    image[p] = wp.float64(1.0) - empty


@wp.kernel
def mask_loss(image: wp.array(dtype=wp.float64), mask: wp.array(dtype=wp.float64), scale: wp.float64,
              loss: wp.array(dtype=wp.float64)):
    p = wp.tid()
    r = image[p] - mask[p]
    wp.atomic_add(loss, 0, scale * r * r)


class SilhouetteFit:
    def __init__(self, device, res):
        self.device = device
        g = (np.arange(res) + 0.5) / res
        xx, yy = np.meshgrid(g, g, indexing="ij")
        self.pix_np = np.stack([xx.ravel(), yy.ravel()], axis=1)
        self.n_pix = self.pix_np.shape[0]
        true_c = np.array([[0.28, 0.30], [0.70, 0.27], [0.32, 0.72], [0.71, 0.69]])
        true_r = np.array([0.16, 0.12, 0.14, 0.18])
        dist = np.linalg.norm(self.pix_np[:, None, :] - true_c[None], axis=2)
        self.mask_np = (dist < true_r[None]).any(axis=1).astype(np.float64)
        rng = np.random.default_rng(12)
        self.pixels = wp.array(self.pix_np, dtype=wp.vec2d, device=device)
        self.mask = wp.array(self.mask_np, dtype=wp.float64, device=device)
        self.centre = wp.array(true_c + rng.normal(0.0, 0.04, true_c.shape), dtype=wp.vec2d, requires_grad=True,
                               device=device)
        self.radius = wp.array(true_r * rng.uniform(0.7, 1.3, 4), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"centre": self.centre, "radius": self.radius}

    def forward(self):
        image = wp.zeros(self.n_pix, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(render, dim=self.n_pix, inputs=[self.pixels, self.centre, self.radius], outputs=[image],
                  device=self.device)
        wp.launch(mask_loss, dim=self.n_pix, inputs=[image, self.mask, wp.float64(1.0 / self.n_pix)],
                  outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def reference_gradient(self):
        c = self.centre.numpy().astype(np.float64)
        r = self.radius.numpy().astype(np.float64)
        diff = self.pix_np[:, None, :] - c[None]
        dist = np.linalg.norm(diff, axis=2)
        d = r[None] - dist
        hit = (d > 0.0).astype(np.float64)
        image = 1.0 - np.prod(1.0 - hit, axis=1)
        dl_dimg = 2.0 * (image - self.mask_np) / self.n_pix
        s = 1.0 / (1.0 + np.exp(-d / TAU))
        slope = s * (1.0 - s) / TAU
        g_r = np.zeros(4)
        g_c = np.zeros((4, 2))
        for k in range(4):
            others = np.prod(np.delete(1.0 - hit, k, axis=1), axis=1)
            dd = dl_dimg * others * slope[:, k]
            g_r[k] = dd.sum()
            g_c[k] = (dd[:, None] * diff[:, k, :] / dist[:, k, None]).sum(axis=0)
        return {"centre": g_c, "radius": g_r}

    def train(self, iterations, lr=0.02):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    return SilhouetteFit(device, 96 if scale == "production" else 24)
