import numpy as np
import warp as wp


@wp.kernel
def breed(
    density: wp.array(dtype=wp.float64),
    growth: wp.array(dtype=wp.float64),
    density_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    x = density[i]
    density_next[i] = growth[i] * x * (wp.float64(1.0) - x)


@wp.kernel
def census_misfit(
    density: wp.array(dtype=wp.float64),
    census: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = density[i] - census[i]
    wp.atomic_add(loss, 0, r * r)


class CensusFit:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        rng = np.random.default_rng(31)
        self.x0_np = rng.uniform(0.2, 0.8, n)
        true_growth = rng.uniform(3.75, 3.95, n)
        x = self.x0_np.copy()
        census = []
        for _ in range(steps):
            x = true_growth * x * (1.0 - x)
            census.append(np.clip(x + rng.normal(0.0, 0.01, n), 0.0, 1.0))
        self.census = [wp.array(c, dtype=wp.float64, device=device) for c in census]
        self.census_np = census
        self.x0 = wp.array(self.x0_np, dtype=wp.float64, device=device)
        self.growth = wp.array(true_growth + rng.uniform(-0.02, 0.02, n), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"growth": self.growth}

    def forward(self):
        x = self.x0
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for k in range(self.steps):
            x_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(breed, dim=self.n, inputs=[x, self.growth], outputs=[x_next], device=self.device)
            wp.launch(census_misfit, dim=self.n, inputs=[x_next, self.census[k]], outputs=[loss], device=self.device)
            x = x_next
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {"growth": self.growth.grad.numpy().copy()}
        tape.zero()
        return grads

    def reference_gradient(self):
        r = self.growth.numpy().astype(np.float64)
        x = self.x0_np.copy()
        dx = np.zeros(self.n)
        g = np.zeros(self.n)
        for k in range(self.steps):
            dx = x * (1.0 - x) + r * (1.0 - 2.0 * x) * dx
            x = r * x * (1.0 - x)
            g += 2.0 * (x - self.census_np[k]) * dx
        return {"growth": g}

    def train(self, iterations, lr=1.0e-3):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["growth"]
            self.growth.assign(self.growth.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return CensusFit(device, n=2000, steps=6)
    return CensusFit(device, n=8, steps=6)
