import numpy as np
import warp as wp


@wp.kernel
def leapfrog(
    u_prev: wp.array(dtype=wp.float64),
    u: wp.array(dtype=wp.float64),
    speed: wp.array(dtype=wp.float64),
    courant: wp.float64,
    u_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = u.shape[0]
    if i == 0 or i == n - 1:
        u_next[i] = wp.float64(0.0)
    else:
        c = speed[i] * courant
        lap = u[i + 1] - wp.float64(2.0) * u[i] + u[i - 1]
        u_next[i] = wp.float64(2.0) * u[i] - u_prev[i] + c * c * lap


@wp.kernel
def record(
    u: wp.array(dtype=wp.float64),
    mics: wp.array(dtype=wp.int32),
    step: int,
    traces: wp.array(dtype=wp.float64),
):
    m = wp.tid()
    traces[step * mics.shape[0] + m] = u[mics[m]]


@wp.kernel
def misfit(
    traces: wp.array(dtype=wp.float64),
    observed: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    r = traces[k] - observed[k]
    wp.atomic_add(loss, 0, r * r)


class DuctInversion:
    def __init__(self, device, cells, steps, mics):
        self.device = device
        self.cells = cells
        self.steps = steps
        self.courant = 0.45
        x = np.linspace(0.0, 1.0, cells)
        self.pulse = np.exp(-((x - 0.3) ** 2) / 0.01)
        self.pulse[0] = 0.0
        self.pulse[-1] = 0.0
        self.mics = wp.array(mics, dtype=wp.int32, device=device)
        self.num_mics = len(mics)
        true_speed = 1.0 + 0.25 * np.exp(-((x - 0.6) ** 2) / 0.02)
        self.speed = wp.array(np.full(cells, 1.05), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"speed": self.speed}
        self.observed = wp.zeros(steps * self.num_mics, dtype=wp.float64, device=device)
        self.observed.assign(self._traces(wp.array(true_speed, dtype=wp.float64, device=device)).numpy())

    def _traces(self, speed):
        u_prev = wp.array(self.pulse, dtype=wp.float64, requires_grad=True, device=self.device)
        u = wp.array(self.pulse, dtype=wp.float64, requires_grad=True, device=self.device)
        traces = wp.zeros(self.steps * self.num_mics, dtype=wp.float64, requires_grad=True, device=self.device)
        for t in range(self.steps):
            u_next = wp.zeros(self.cells, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                leapfrog,
                dim=self.cells,
                inputs=[u_prev, u, speed, wp.float64(self.courant)],
                outputs=[u_next],
                device=self.device,
            )
            wp.launch(record, dim=self.num_mics, inputs=[u_next, self.mics, t], outputs=[traces], device=self.device)
            u_prev, u = u, u_next
        return traces

    def forward(self):
        traces = self._traces(self.speed)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(misfit, dim=traces.shape[0], inputs=[traces, self.observed], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = self.speed.grad.numpy().copy()
        tape.zero()
        return {"speed": g}

    def train(self, iterations, lr=0.02):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["speed"]
            self.speed.assign(self.speed.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return DuctInversion(device, cells=64, steps=240, mics=[7, 32, 57])
    return DuctInversion(device, cells=16, steps=40, mics=[3, 12])
