import numpy as np
import warp as wp


@wp.kernel
def pk_step(
    gut: wp.array(dtype=wp.float64),
    central: wp.array(dtype=wp.float64),
    absorption: wp.array(dtype=wp.float64),
    elimination: wp.array(dtype=wp.float64),
    dt: wp.float64,
    gut_next: wp.array(dtype=wp.float64),
    central_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    g = gut[i]
    c = central[i]
    uptake = absorption[i] * g
    gut_next[i] = g - dt * uptake
    central_next[i] = c + dt * (uptake - elimination[i] * c)


@wp.kernel
def sample_misfit(
    central: wp.array(dtype=wp.float64),
    volume: wp.array(dtype=wp.float64),
    observed: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = central[i] / volume[i] - observed[i]
    wp.atomic_add(loss, 0, r * r)


class DoseFit:
    def __init__(self, device, n, hours, lr):
        self.device = device
        self.n = n
        self.dt = 0.05
        self.steps = int(round(hours / self.dt))
        self.sample_every = int(round(0.5 / self.dt))
        self.lr = lr
        rng = np.random.default_rng(21)
        self.dose = 100.0
        self.volume_np = rng.uniform(30.0, 50.0, n)
        self.volume = wp.array(self.volume_np, dtype=wp.float64, device=device)
        true_ka = rng.uniform(2.0, 4.0, n)
        true_ke = rng.uniform(0.15, 0.35, n)
        self.observed = [wp.array(c, dtype=wp.float64, device=device) for c in self._samples_numpy(true_ka, true_ke)]
        self.gut0 = wp.array(np.full(n, self.dose), dtype=wp.float64, device=device)
        self.central0 = wp.zeros(n, dtype=wp.float64, device=device)
        self.absorption = wp.array(np.full(n, 3.0), dtype=wp.float64, requires_grad=True, device=device)
        self.elimination = wp.array(np.full(n, 0.25), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"absorption": self.absorption, "elimination": self.elimination}

    def _samples_numpy(self, ka, ke):
        g = np.full(self.n, self.dose)
        c = np.zeros(self.n)
        out = []
        for k in range(self.steps):
            up = ka * g
            g, c = g - self.dt * up, c + self.dt * (up - ke * c)
            if (k + 1) % self.sample_every == 0:
                out.append(c / self.volume_np)
        return out

    def forward(self):
        g, c = self.gut0, self.central0
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for k in range(self.steps):
            g_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            c_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                pk_step,
                dim=self.n,
                inputs=[g, c, self.absorption, self.elimination, wp.float64(self.dt)],
                outputs=[g_next, c_next],
                device=self.device,
            )
            g, c = g_next, c_next
            if (k + 1) % self.sample_every == 0:
                j = (k + 1) // self.sample_every - 1
                wp.launch(sample_misfit, dim=self.n, inputs=[c, self.volume, self.observed[j]], outputs=[loss], device=self.device)
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

    def train(self, iterations):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - self.lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return DoseFit(device, n=256, hours=8.0, lr=0.001)
    return DoseFit(device, n=6, hours=8.0, lr=0.001)
