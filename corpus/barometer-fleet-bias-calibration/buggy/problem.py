import numpy as np
import warp as wp

SEA_LEVEL = 101325.0


@wp.kernel
def altitude_misfit(
    raw: wp.array(dtype=wp.float32),
    bias: wp.array(dtype=wp.float32),
    gain: wp.array(dtype=wp.float32),
    gps: wp.array(dtype=wp.float32),
    reference: wp.float32,
    linear: wp.float32,
    quadratic: wp.float32,
    n_sensors: int,
    loss: wp.array(dtype=wp.float32),
):
    t = wp.tid()
    s = t % n_sensors
    dp = (raw[t] + bias[s]) - reference
    x = gain[s] * dp
    alt = linear * x + quadratic * x * x
    r = alt - gps[t]
    wp.atomic_add(loss, 0, r * r)


class BarometerFleet:
    def __init__(self, device, n, samples):
        self.device = device
        self.n = n
        self.samples = samples
        self.linear = -0.0832
        self.quadratic = 3.4e-6
        rng = np.random.default_rng(23)
        true_bias = rng.choice([-1.0, 1.0], n) * rng.uniform(5.0, 20.0, n)
        true_gain = rng.uniform(0.97, 1.03, n)
        heights = rng.uniform(0.0, 40.0, (samples, n))
        dp_true = -heights / 0.0832
        pressure = SEA_LEVEL + dp_true
        x = np.tile(true_gain, samples) * dp_true.ravel()
        gps = self.linear * x + self.quadratic * x * x
        raw = pressure.ravel() - np.tile(true_bias, samples)
        self.reference = SEA_LEVEL
        self.raw = wp.array(raw, dtype=wp.float32, device=device)
        self.gps = wp.array(gps, dtype=wp.float32, device=device)
        self.bias = wp.array(np.full(n, 4.0), dtype=wp.float32, requires_grad=True, device=device)
        self.gain = wp.array(true_gain, dtype=wp.float32, device=device)
        self.params = {"bias": self.bias}

    def forward(self):
        loss = wp.zeros(1, dtype=wp.float32, requires_grad=True, device=self.device)
        wp.launch(
            altitude_misfit,
            dim=self.n * self.samples,
            inputs=[
                self.raw,
                self.bias,
                self.gain,
                self.gps,
                wp.float32(self.reference),
                wp.float32(self.linear),
                wp.float32(self.quadratic),
                self.n,
            ],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def reference_gradient(self):
        raw = self.raw.numpy().astype(np.float64).reshape(self.samples, self.n)
        gps = self.gps.numpy().astype(np.float64).reshape(self.samples, self.n)
        b = self.bias.numpy().astype(np.float64)
        g = self.gain.numpy().astype(np.float64)
        dp = (raw + b) - self.reference
        x = g * dp
        r = self.linear * x + self.quadratic * x * x - gps
        dalt = self.linear + 2.0 * self.quadratic * x
        return {"bias": np.sum(2.0 * r * dalt * g, axis=0)}

    def train(self, iterations, lr=5.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return BarometerFleet(device, n=500, samples=64)
    return BarometerFleet(device, n=8, samples=6)
