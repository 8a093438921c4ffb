import numpy as np
import warp as wp


@wp.kernel
def deposit(
    heads: wp.array(dtype=wp.vec2d),
    samples: wp.array(dtype=wp.vec2d),
    width: wp.float64,
    water: wp.array(dtype=wp.float64),
):
    s, h = wp.tid()
    d = samples[s] - heads[h]
    wp.atomic_add(water, s, wp.exp(-wp.dot(d, d) / (width * width)))


@wp.kernel
def coverage_misfit(
    water: wp.array(dtype=wp.float64),
    target: wp.float64,
    weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    s = wp.tid()
    r = water[s] - target
    wp.atomic_add(loss, 0, weight * r * r)


@wp.kernel
def spacing_penalty(
    heads: wp.array(dtype=wp.vec2d),
    cutoff: wp.float64,
    stiffness: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i, j = wp.tid()
    if i >= j:
        return
    d = heads[i] - heads[j]
    r2 = wp.dot(d, d)
    if r2 < cutoff * cutoff:
        r = wp.length(d)
        gap = cutoff - r
        wp.atomic_add(loss, 0, stiffness * gap * gap)


def plot_layout(plots_x, plots_y, size):
    heads = []
    for a in range(plots_x):
        for b in range(plots_y):
            x0, y0 = a * size, b * size
            heads += [(x0, y0), (x0 + size, y0), (x0, y0 + size), (x0 + size, y0 + size)]
            heads.append((x0 + 0.5 * size, y0 + 0.5 * size))
    return np.array(heads, dtype=np.float64)


class SprinklerLayout:
    def __init__(self, device, plots_x, plots_y, samples_per_plot):
        self.device = device
        self.size = 1.0
        self.width = 0.45
        self.cutoff = 0.8
        self.stiffness = 2.0
        self.target = 1.0
        heads = plot_layout(plots_x, plots_y, self.size)
        self.n = heads.shape[0]
        xs = (np.arange(samples_per_plot * plots_x) + 0.5) * self.size / samples_per_plot
        ys = (np.arange(samples_per_plot * plots_y) + 0.5) * self.size / samples_per_plot
        gx, gy = np.meshgrid(xs, ys)
        pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
        self.weight = 1.0 / pts.shape[0]
        self.samples = wp.array(pts, dtype=wp.vec2d, device=device)
        self.heads = wp.array(heads, dtype=wp.vec2d, device=device, requires_grad=True)
        self.params = {"heads": self.heads}

    def loss(self):
        m = self.samples.shape[0]
        water = wp.zeros(m, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            deposit,
            dim=(m, self.n),
            inputs=[self.heads, self.samples, wp.float64(self.width)],
            outputs=[water],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            coverage_misfit,
            dim=m,
            inputs=[water, wp.float64(self.target), wp.float64(self.weight)],
            outputs=[loss],
            device=self.device,
        )
        wp.launch(
            spacing_penalty,
            dim=(self.n, self.n),
            inputs=[self.heads, wp.float64(self.cutoff), wp.float64(self.stiffness)],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {"heads": self.heads.grad.numpy().copy()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["heads"]
            self.heads.assign(self.heads.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return SprinklerLayout(device, plots_x=3, plots_y=3, samples_per_plot=8)
    return SprinklerLayout(device, plots_x=1, plots_y=1, samples_per_plot=6)
