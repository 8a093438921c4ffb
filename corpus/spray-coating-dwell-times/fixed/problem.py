import numpy as np
import warp as wp


@wp.kernel
def deposit(
    dwell: wp.array(dtype=wp.float64),
    nozzle_x: wp.array(dtype=wp.float64),
    cell_x: wp.array(dtype=wp.float64),
    width: wp.float64,
    jitter: wp.float64,
    seed: int,
    offset: int,
    thickness: wp.array(dtype=wp.float64),
):
    s, j, c = wp.tid()
    nozzles = dwell.shape[0]
    state = wp.rand_init(seed, offset + s * nozzles + j)
    shift = jitter * wp.float64(wp.randn(state))
    d = (cell_x[c] - nozzle_x[j] - shift) / width
    wp.atomic_add(thickness, c, dwell[j] * wp.exp(-d * d))


@wp.kernel
def coat_misfit(
    thickness: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    samples: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    c = wp.tid()
    t = thickness[c] / samples
    d = t - target[c]
    wp.atomic_add(loss, 0, d * d + wp.float64(0.5) * wp.max(target[c] - t, wp.float64(0.0)) * d * d)


class SprayLine:
    def __init__(self, device, nozzles, cells, samples):
        self.device = device
        self.nozzles = nozzles
        self.cells = cells
        self.samples = samples
        self.block = samples * nozzles
        self.width = 0.6
        self.jitter = 0.25
        self.seed = 0
        self.draw = 0
        self.nozzle_x = wp.array(np.linspace(0.5, 7.5, nozzles), dtype=wp.float64, device=device)
        xc = np.linspace(0.0, 8.0, cells)
        self.cell_x = wp.array(xc, dtype=wp.float64, device=device)
        self.target = wp.array(1.0 + 0.2 * np.sin(xc), dtype=wp.float64, device=device)
        self.dwell = wp.array(np.full(nozzles, 0.8) + 0.1 * np.cos(np.arange(nozzles)), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"dwell": self.dwell}

    def set_seed(self, seed):
        self.seed = seed
        self.draw = 0

    def _next_offset(self):
        offset = self.draw * self.block
        self.draw += 1
        return offset

    def forward(self, offset):
        thickness = wp.zeros(self.cells, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            deposit,
            dim=(self.samples, self.nozzles, self.cells),
            inputs=[self.dwell, self.nozzle_x, self.cell_x, wp.float64(self.width), wp.float64(self.jitter), self.seed, offset],
            outputs=[thickness],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(coat_misfit, dim=self.cells, inputs=[thickness, self.target, wp.float64(self.samples)], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward(self._next_offset()).numpy()[0])

    def gradient(self):
        offset = self.draw * self.block
        self.draw += 1
        tape = wp.Tape()
        with tape:
            loss = self.forward(offset)
        tape.backward(loss)
        out = {"dwell": self.dwell.grad.numpy().copy()}
        tape.zero()
        return out

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["dwell"]
            self.dwell.assign(self.dwell.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return SprayLine(device, nozzles=16, cells=96, samples=64)
    return SprayLine(device, nozzles=8, cells=24, samples=6)
