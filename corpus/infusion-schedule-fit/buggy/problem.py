import numpy as np
import warp as wp


@wp.kernel
def load_patients(
    dose: wp.array(dtype=wp.float64),
    volume: wp.array(dtype=wp.float64),
    central: wp.array(dtype=wp.float64),
    peripheral: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    central[p] = dose[0] / volume[p]
    peripheral[p] = wp.float64(0.0)


@wp.kernel
def pk_step(
    central: wp.array(dtype=wp.float64),
    peripheral: wp.array(dtype=wp.float64),
    rates: wp.array(dtype=wp.float64),
    interval: int,
    volume: wp.array(dtype=wp.float64),
    k10: wp.array(dtype=wp.float64),
    k12: wp.float64,
    k21: wp.float64,
    dt: wp.float64,
    central_out: wp.array(dtype=wp.float64),
    peripheral_out: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    c = central[p]
    q = peripheral[p]
    dc = rates[interval] / volume[p] - (k10[p] + k12) * c + k21 * q
    dq = k12 * c - k21 * q
    central_out[p] = c + dt * dc
    peripheral_out[p] = q + dt * dq


@wp.kernel
def effect_misfit(
    central: wp.array(dtype=wp.float64),
    ec50: wp.float64,
    target: wp.float64,
    weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    c = central[p]
    e = c / (c + ec50)
    d = e - target
    wp.atomic_add(loss, 0, weight * d * d)


class InfusionPlan:
    def __init__(self, device, patients, intervals, steps_per_interval):
        self.device = device
        self.patients = patients
        self.intervals = intervals
        self.per = steps_per_interval
        self.dt = 0.1
        self.k12 = 0.3
        self.k21 = 0.15
        self.ec50 = 2.0
        self.target = 0.6
        rng = np.random.default_rng(11)
        self.volume = wp.array(8.0 + 4.0 * rng.random(patients), dtype=wp.float64, device=device)
        self.k10 = wp.array(0.2 + 0.1 * rng.random(patients), dtype=wp.float64, device=device)
        self.rates = wp.array(np.full(intervals, 4.0) + 0.5 * np.sin(np.arange(intervals)), dtype=wp.float64, requires_grad=True, device=device)
        self.dose = wp.array([20.0], dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"rates": self.rates, "dose": self.dose}

    def _state(self):
        return (
            wp.zeros(self.patients, dtype=wp.float64, requires_grad=True, device=self.device),
            wp.zeros(self.patients, dtype=wp.float64, requires_grad=True, device=self.device),
        )

    def forward(self):
        c, q = self._state()
        wp.launch(load_patients, dim=self.patients, inputs=[self.dose, self.volume], outputs=[c, q], device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        weight = 1.0 / (self.patients * self.intervals * self.per)
        for j in range(self.intervals):
            for _ in range(self.per):
                cn, qn = self._state()
                wp.launch(
                    pk_step,
                    dim=self.patients,
                    inputs=[c, q, self.rates, j, self.volume, self.k10, wp.float64(self.k12), wp.float64(self.k21), wp.float64(self.dt)],
                    outputs=[cn, qn],
                    device=self.device,
                )
                c, q = cn, qn
                wp.launch(
                    effect_misfit,
                    dim=self.patients,
                    inputs=[c, wp.float64(self.ec50), wp.float64(self.target), wp.float64(weight)],
                    outputs=[loss],
                    device=self.device,
                )
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def _collect(self):
        out = {}
        for name, arr in self.params.items():
            out[name] = arr.grad.numpy().copy()
            arr.grad.zero_()
        return out

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        grads = self._collect()
        tape.backward(loss)
        return grads

    def train(self, iterations, lr=1000.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for name, arr in self.params.items():
                arr.assign(arr.numpy() - lr * g[name])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return InfusionPlan(device, patients=64, intervals=12, steps_per_interval=10)
    return InfusionPlan(device, patients=6, intervals=8, steps_per_interval=5)
