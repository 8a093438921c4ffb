import numpy as np
import warp as wp

from zones import ZoneModel


@wp.kernel
def logged_mismatch(
    temp: wp.array(dtype=wp.float64),
    logged: wp.array(dtype=wp.float64),
    weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = temp[i] - logged[i]
    wp.atomic_add(loss, 0, weight * r * r)


class HeatingFit:
    def __init__(self, device, n, hours):
        self.device = device
        self.n = n
        self.hours = hours
        self.model = ZoneModel(n, coupling=0.4, envelope=0.25, capacity=4.0, dt=1.0, device=device)
        h = np.arange(hours)
        self.schedule = ((h % 24 >= 7) & (h % 24 < 19)).astype(int)
        self.outdoor = 4.0 + 3.0 * np.sin(2.0 * np.pi * (h - 9) / 24.0)
        rng = np.random.default_rng(11)
        self.temp0 = wp.array(np.full(n, 17.0) + rng.uniform(-0.5, 0.5, n), dtype=wp.float64, device=device)
        true_day = 4.5 + rng.uniform(-0.8, 0.8, n)
        true_night = 2.0 + rng.uniform(-0.5, 0.5, n)
        temps = self._simulate_numpy(self.temp0.numpy(), true_day, true_night)
        self.logged = [wp.array(t, dtype=wp.float64, device=device) for t in temps[1:]]
        self.day_power = wp.array(np.full(n, 4.0), dtype=wp.float64, requires_grad=True, device=device)
        self.night_power = wp.array(np.full(n, 2.5), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"day_power": self.day_power, "night_power": self.night_power}

    def _simulate_numpy(self, t, day, night):
        m = self.model
        out = [t.copy()]
        for k in range(self.hours):
            heat = day if self.schedule[k] == 1 else night
            tl = np.concatenate([t[:1], t[:-1]])
            tr = np.concatenate([t[1:], t[-1:]])
            flow = heat - m.envelope * (t - self.outdoor[k]) + m.coupling * (tl + tr - 2.0 * t)
            t = t + m.dt / m.capacity * flow
            out.append(t.copy())
        return out

    def forward(self):
        temps = self.model.run(self.temp0, self.day_power, self.night_power, self.schedule, self.outdoor)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for k in range(self.hours):
            wp.launch(
                logged_mismatch,
                dim=self.n,
                inputs=[temps[k + 1], self.logged[k], wp.float64(1.0 / self.hours)],
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

    def train(self, iterations, lr=0.3):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return HeatingFit(device, n=40, hours=24 * 7)
    return HeatingFit(device, n=6, hours=24)
