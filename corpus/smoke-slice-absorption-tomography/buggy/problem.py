import numpy as np
import warp as wp


@wp.kernel
def optical_depth(
    density: wp.array(dtype=wp.float64),
    n: int,
    ds: wp.float64,
    depth_rows: wp.array(dtype=wp.float64),
    depth_cols: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    r = k // n
    c = k - r * n
    tau = density[k] * ds
    wp.atomic_add(depth_rows, r, tau)
    wp.atomic_add(depth_cols, c, tau)


@wp.kernel
def image_error(
    depth: wp.array(dtype=wp.float64),
    backlight: wp.float64,
    observed: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    e = backlight * wp.exp(-depth[i]) - observed[i]
    wp.atomic_add(loss, 0, e * e)


@wp.kernel
def positivity(density: wp.array(dtype=wp.float64), weight: wp.float64, loss: wp.array(dtype=wp.float64)):
    k = wp.tid()
    d = wp.min(density[k], wp.float64(0.0))
    wp.atomic_add(loss, 0, weight * d * d)


def smoke_slice(n):
    x = (np.arange(n) + 0.5) / n
    gx, gy = np.meshgrid(x, x, indexing="ij")
    return 0.4 + 1.6 * np.exp(-((gx - 0.45) ** 2 + (gy - 0.55) ** 2) / 0.08)


class AbsorptionTomography:
    def __init__(self, device, n, warm_start):
        self.device = device
        self.n = n
        self.ds = 1.0 / n
        self.backlight = 1.0
        truth = smoke_slice(n)
        tau_rows = truth.sum(axis=1) * self.ds
        tau_cols = truth.sum(axis=0) * self.ds
        rng = np.random.default_rng(13)
        obs = self.backlight * np.exp(-np.concatenate([tau_rows, tau_cols]))
        self.observed = wp.array(obs + 0.002 * rng.standard_normal(obs.shape), dtype=wp.float64, device=device)
        if warm_start:
            x = np.arange(n)
            ringing = 0.5 * np.cos(np.pi * np.add.outer(x, x) / 2.0)
            init = truth + ringing + 0.15 * rng.standard_normal((n, n))
        else:
            init = np.full((n, n), 0.9) + 0.1 * rng.uniform(size=(n, n))
        self.density = wp.array(init.ravel(), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"density": self.density}
        self.weight = 10.0

    def data_term(self):
        depth = wp.zeros(2 * self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            optical_depth,
            dim=self.n * self.n,
            inputs=[self.density, self.n, wp.float64(self.ds)],
            outputs=[depth[: self.n], depth[self.n :]],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            image_error,
            dim=2 * self.n,
            inputs=[depth, wp.float64(self.backlight), self.observed],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def add_priors(self, loss):
        wp.launch(
            positivity,
            dim=self.n * self.n,
            inputs=[self.density, wp.float64(self.weight)],
            outputs=[loss],
            device=self.device,
        )

    def objective(self):
        loss = self.data_term()
        self.add_priors(loss)
        return float(loss.numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.data_term()
        self.add_priors(loss)
        tape.backward(loss)
        g = self.density.grad.numpy().copy()
        tape.zero()
        return {"density": g}

    def train(self, iterations, lr=2.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["density"]
            self.density.assign(self.density.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return AbsorptionTomography(device, n=12, warm_start=True)
    return AbsorptionTomography(device, n=4, warm_start=False)
