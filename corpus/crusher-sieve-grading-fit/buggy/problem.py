import numpy as np
import warp as wp


@wp.kernel
def crush(
    feed_size: wp.array(dtype=wp.float64),
    route: wp.array(dtype=wp.int32),
    gap: wp.array(dtype=wp.float64),
    exponent: wp.float64,
    product: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    c = route[j]
    g = gap[c]
    r = feed_size[j] / g
    product[j] = g * wp.pow(wp.float64(1.0) + r, exponent) - g * wp.float64(0.6)


@wp.kernel
def sieve(
    product: wp.array(dtype=wp.float64),
    feed_mass: wp.array(dtype=wp.float64),
    finest: wp.float64,
    log_ratio: wp.float64,
    bins: int,
    grading: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    u = wp.log(product[j] / finest) / log_ratio
    k = int(wp.floor(u))
    k = wp.clamp(k, 0, bins - 1)
    wp.atomic_add(grading, k, feed_mass[j])


@wp.kernel
def grading_error(
    grading: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    total: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    e = grading[k] / total - target[k]
    wp.atomic_add(loss, 0, e * e)


class CrusherCircuit:
    def __init__(self, device, crushers, particles, bins):
        self.device = device
        self.crushers = crushers
        self.particles = particles
        self.bins = bins
        self.exponent = 0.55
        self.finest = 4.0
        self.log_ratio = float(np.log(np.sqrt(2.0)))
        rng = np.random.default_rng(23)
        feed = np.exp(rng.uniform(np.log(25.0), np.log(140.0), particles))
        mass = (feed / 60.0) ** 3
        self.total = float(mass.sum())
        self.feed_size = wp.array(feed, dtype=wp.float64, device=device)
        self.feed_mass = wp.array(mass, dtype=wp.float64, device=device)
        self.route = wp.array((np.arange(particles) % crushers).astype(np.int32), dtype=wp.int32, device=device)
        edges = np.arange(bins + 1)
        cdf = 1.0 / (1.0 + np.exp(-(edges - 0.52 * bins) / 0.9))
        cdf = (cdf - cdf[0]) / (cdf[-1] - cdf[0])
        self.target = wp.array(np.diff(cdf), dtype=wp.float64, device=device)
        gap0 = np.linspace(14.0, 22.0, crushers) + rng.uniform(-1.0, 1.0, crushers)
        self.gap = wp.array(gap0, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"gap": self.gap}

    def _forward(self):
        product = wp.zeros(self.particles, dtype=wp.float64, device=self.device, requires_grad=True)
        grading = wp.zeros(self.bins, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            crush,
            dim=self.particles,
            inputs=[self.feed_size, self.route, self.gap, wp.float64(self.exponent)],
            outputs=[product],
            device=self.device,
        )
        wp.launch(
            sieve,
            dim=self.particles,
            inputs=[product, self.feed_mass, wp.float64(self.finest), wp.float64(self.log_ratio), self.bins],
            outputs=[grading],
            device=self.device,
        )
        wp.launch(
            grading_error,
            dim=self.bins,
            inputs=[grading, self.target, wp.float64(self.total)],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self._forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self._forward()
        tape.backward(loss)
        grads = {"gap": self.gap.grad.numpy().copy()}
        tape.zero()
        return grads

    def reference_gradient(self):
        return {"gap": np.zeros(self.gap.shape, dtype=np.float64)}

    def train(self, iterations, lr=200.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["gap"]
            self.gap.assign(np.maximum(self.gap.numpy() - lr * g, 2.0))
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return CrusherCircuit(device, crushers=6, particles=400, bins=12)
    return CrusherCircuit(device, crushers=3, particles=48, bins=10)
