import numpy as np
import warp as wp


@wp.kernel
def coverage_kernel(
    cells: wp.array(dtype=wp.vec2),
    nozzles: wp.array(dtype=wp.vec2),
    rates: wp.array(dtype=wp.float32),
    spread: float,
    coverage: wp.array(dtype=wp.float32),
):
    c = wp.tid()
    total = float(0.0)
    for j in range(nozzles.shape[0]):
        d = cells[c] - nozzles[j]
        total += rates[j] * wp.exp(-wp.dot(d, d) / (spread * spread))
    coverage[c] = total


@wp.kernel
def uniformity_kernel(coverage: wp.array(dtype=wp.float32), target: float, inv_n: float, loss: wp.array(dtype=wp.float32)):
    c = wp.tid()
    d = coverage[c] - target
    wp.atomic_add(loss, 0, d * d * inv_n)


class Orchard:
    def __init__(self, rows, nozzles, seed):
        rng = np.random.default_rng(seed)
        g = np.linspace(0.0, 1.0, rows)
        cells = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2).astype(np.float32)
        noz = rng.uniform(0.0, 1.0, (nozzles, 2)).astype(np.float32)
        self.cells = wp.array(cells, dtype=wp.vec2)
        self.nozzles = wp.array(noz, dtype=wp.vec2)
        self.n = cells.shape[0]
        self.rates = wp.array(np.full(nozzles, 0.5, dtype=np.float32), dtype=wp.float32, requires_grad=True)

    def coverage(self, spread=0.35):
        cov = wp.zeros(self.n, dtype=wp.float32, requires_grad=True)
        wp.launch(coverage_kernel, dim=self.n, inputs=[self.cells, self.nozzles, self.rates, spread], outputs=[cov])
        return cov

    def uniformity_loss(self, cov, target=1.0):
        loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        wp.launch(uniformity_kernel, dim=self.n, inputs=[cov, target, 1.0 / self.n], outputs=[loss])
        return loss
