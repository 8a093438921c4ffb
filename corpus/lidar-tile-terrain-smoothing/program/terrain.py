import numpy as np
import warp as wp


@wp.kernel
def tile_energy(
    h: wp.array(dtype=wp.float32),
    obs: wp.array(dtype=wp.float32),
    weight: wp.array(dtype=wp.float32),
    width: int,
    smooth: wp.float32,
    loss: wp.array(dtype=wp.float64),
):
    i, j = wp.tid()
    k = i * width + j
    r = h[k] - obs[k]
    e = weight[k] * r * r
    if j + 1 < width:
        dx = h[k + 1] - h[k]
        e += smooth * dx * dx
    if i + 1 < width:
        dy = h[k + width] - h[k]
        e += smooth * dy * dy
    wp.atomic_add(loss, 0, wp.float64(e))


def synthetic_tile(width, rng):
    x = np.linspace(0.0, 1.0, width)
    xx, yy = np.meshgrid(x, x, indexing="ij")
    ground = 0.8 * np.sin(2.0 * np.pi * xx) * np.cos(1.5 * np.pi * yy) + 0.3 * xx
    returns = rng.integers(0, 4, size=ground.shape)
    obs = ground + rng.normal(0.0, 0.05, size=ground.shape)
    weight = returns / 3.0
    return obs.astype(np.float32).ravel(), weight.astype(np.float32).ravel()


class TerrainTile:
    def __init__(self, width, smooth, device, rng):
        self.width = width
        self.device = device
        self.smooth = smooth
        obs, weight = synthetic_tile(width, rng)
        self.obs = wp.array(obs, dtype=wp.float32, device=device)
        self.weight = wp.array(weight, dtype=wp.float32, device=device)
        self.h = wp.array(obs, dtype=wp.float32, requires_grad=True, device=device)

    def energy(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(tile_energy, dim=(self.width, self.width),
                  inputs=[self.h, self.obs, self.weight, self.width, wp.float32(self.smooth)],
                  outputs=[loss], device=self.device)
        return loss
