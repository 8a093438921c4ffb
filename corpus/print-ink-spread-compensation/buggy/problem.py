import numpy as np
import warp as wp


@wp.kernel
def spread(
    q: wp.array(dtype=wp.float64),
    rate: wp.float64,
    gain: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = q.shape[0]
    left = q[wp.max(i - 1, 0)]
    right = q[wp.min(i + 1, n - 1)]
    c = q[i]
    out[i] = c + rate * (left + right - wp.float64(2.0) * c) + gain * c * (wp.float64(1.0) - c)


@wp.kernel
def tone_error(
    q: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    density: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    tone = wp.float64(1.0) - wp.exp(-density * q[i])
    r = tone - target[i]
    wp.atomic_add(loss, 0, r * r)


class InkSpread:
    def __init__(self, device, n, passes):
        self.device = device
        self.n = n
        self.passes = passes
        self.rate = 0.18
        self.gain = 0.12
        self.density = 1.6
        x = np.linspace(0.0, 1.0, n)
        wanted = 0.25 + 0.4 * np.exp(-((x - 0.5) ** 2) / 0.04) + 0.1 * np.sin(6.0 * x)
        self.target = wp.array(wanted, dtype=wp.float64, device=device)
        self.coverage = wp.array(0.3 + 0.2 * np.cos(3.0 * x), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"coverage": self.coverage}
        self.tape = wp.Tape()

    def forward(self):
        q = self.coverage
        for _ in range(self.passes):
            out = wp.clone(q)
            wp.launch(
                spread,
                dim=self.n,
                inputs=[q, wp.float64(self.rate), wp.float64(self.gain)],
                outputs=[out],
                device=self.device,
            )
            q = out
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(tone_error, dim=self.n, inputs=[q, self.target, wp.float64(self.density)], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            loss = self.forward()
        self.tape.backward(loss)
        grads = {"coverage": self.coverage.grad.numpy().copy()}
        self.tape.zero()
        return grads

    def train(self, iterations, lr=0.5):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["coverage"]
            self.coverage.assign(self.coverage.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return InkSpread(device, n=256, passes=12)
    return InkSpread(device, n=12, passes=3)
