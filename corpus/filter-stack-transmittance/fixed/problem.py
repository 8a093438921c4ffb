import numpy as np
import warp as wp


@wp.kernel
def detector_signal(
    tau: wp.array(dtype=wp.float64),
    stack: wp.array2d(dtype=int),
    count: wp.array(dtype=int),
    source: wp.array(dtype=wp.float64),
    running: wp.array2d(dtype=wp.float64),
    signal: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    running[i, 0] = wp.float64(1.0)
    for k in range(count[i]):
        running[i, k + 1] = running[i, k] * tau[stack[i, k]]
    signal[i] = source[0] * running[i, count[i]]


@wp.kernel
def relative_misfit(
    signal: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = signal[i] / measured[i] - wp.float64(1.0)
    wp.atomic_add(loss, 0, r * r)


class FilterBench:
    def __init__(self, device, filters, channels, max_stack):
        self.device = device
        self.channels = channels
        self.max_stack = max_stack
        rng = np.random.default_rng(17)
        count = rng.integers(1, max_stack + 1, channels)
        stack = np.zeros((channels, max_stack), dtype=np.int32)
        for i in range(channels):
            stack[i, : count[i]] = rng.choice(filters, size=count[i], replace=False)
        true_tau = rng.uniform(0.3, 0.9, filters)
        true_source = 5.0
        measured = np.array([true_source * np.prod(true_tau[stack[i, : count[i]]]) for i in range(channels)])
        measured *= 1.0 + 0.01 * rng.normal(size=channels)
        self.stack = wp.array(stack, dtype=int, device=device)
        self.count = wp.array(count.astype(np.int32), dtype=int, device=device)
        self.measured = wp.array(measured, dtype=wp.float64, device=device)
        self.tau = wp.array(np.full(filters, 0.6), dtype=wp.float64, device=device, requires_grad=True)
        self.source = wp.array([4.0], dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"tau": self.tau, "source": self.source}

    def loss(self):
        running = wp.zeros((self.channels, self.max_stack + 1), dtype=wp.float64, device=self.device, requires_grad=True)
        signal = wp.zeros(self.channels, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            detector_signal,
            dim=self.channels,
            inputs=[self.tau, self.stack, self.count, self.source],
            outputs=[running, signal],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(relative_misfit, dim=self.channels, inputs=[signal, self.measured], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.02):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return FilterBench(device, filters=24, channels=200, max_stack=12)
    return FilterBench(device, filters=6, channels=10, max_stack=4)
