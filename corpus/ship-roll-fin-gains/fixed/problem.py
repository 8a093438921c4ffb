import numpy as np
import warp as wp

from montecarlo import WaveSampler, value_and_grad


@wp.kernel
def roll_step(
    roll: wp.array(dtype=wp.float64),
    rate: wp.array(dtype=wp.float64),
    waves: wp.array2d(dtype=wp.float64),
    t: int,
    gains: wp.array(dtype=wp.float64),
    natural: wp.float64,
    zeta: wp.float64,
    max_moment: wp.float64,
    dt: wp.float64,
    roll_out: wp.array(dtype=wp.float64),
    rate_out: wp.array(dtype=wp.float64),
    moment: wp.array(dtype=wp.float64),
):
    m = wp.tid()
    phi = roll[m]
    w = rate[m]
    command = gains[0] * phi + gains[1] * w
    u = max_moment * wp.tanh(command / max_moment)
    acc = -natural * natural * phi - wp.float64(2.0) * zeta * natural * w - u + waves[m, t]
    wn = w + dt * acc
    rate_out[m] = wn
    roll_out[m] = phi + dt * wn
    moment[m] = u


@wp.kernel
def comfort_cost(
    roll: wp.array(dtype=wp.float64),
    moment: wp.array(dtype=wp.float64),
    effort: wp.float64,
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    m = wp.tid()
    phi = roll[m]
    u = moment[m]
    wp.atomic_add(loss, 0, scale * (phi * phi + effort * u * u))


class RollStabiliser:
    def __init__(self, device, realizations, steps):
        self.device = device
        self.realizations = realizations
        self.steps = steps
        self.dt = 0.05
        self.natural = 0.6
        self.zeta = 0.05
        self.max_moment = 0.4
        self.effort = 0.5
        self.sampler = WaveSampler(realizations, steps, 0.8, device)
        self.gains = wp.array([0.3, 0.8], dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"gains": self.gains}

    def set_seed(self, seed):
        self.sampler.reseed(seed)

    def simulate(self, waves):
        n = self.realizations
        roll = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
        rate = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        scale = self.dt / n
        for t in range(self.steps):
            roll_n = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
            rate_n = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
            moment = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                roll_step,
                dim=n,
                inputs=[roll, rate, waves, t, self.gains, wp.float64(self.natural), wp.float64(self.zeta), wp.float64(self.max_moment), wp.float64(self.dt)],
                outputs=[roll_n, rate_n, moment],
                device=self.device,
            )
            wp.launch(comfort_cost, dim=n, inputs=[roll_n, moment, wp.float64(self.effort), wp.float64(scale)], outputs=[loss], device=self.device)
            roll, rate = roll_n, rate_n
        return loss

    def objective(self):
        return float(self.simulate(self.sampler.draw()).numpy()[0])

    def gradient(self):
        self.last_value, grads = value_and_grad(self.simulate, self.sampler, self.params)
        return grads

    def train(self, iterations, lr=0.5):
        losses = []
        for _ in range(iterations):
            g = self.gradient()["gains"]
            losses.append(self.last_value)
            self.gains.assign(self.gains.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return RollStabiliser(device, realizations=256, steps=400)
    return RollStabiliser(device, realizations=8, steps=60)
