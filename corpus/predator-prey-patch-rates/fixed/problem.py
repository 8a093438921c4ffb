import numpy as np
import warp as wp


@wp.kernel
def lv_step(
    prey: wp.array(dtype=wp.float64),
    pred: wp.array(dtype=wp.float64),
    growth: wp.array(dtype=wp.float64),
    predation: wp.array(dtype=wp.float64),
    conversion: wp.float64,
    mortality: wp.float64,
    capacity: wp.float64,
    dt: wp.float64,
    prey_out: wp.array(dtype=wp.float64),
    pred_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    x = prey[i]
    y = pred[i]
    dx = growth[i] * x * (wp.float64(1.0) - x / capacity) - predation[i] * x * y
    dy = conversion * predation[i] * x * y - mortality * y
    prey_out[i] = x + dt * dx
    pred_out[i] = y + dt * dy


@wp.kernel
def census_misfit(
    prey: wp.array(dtype=wp.float64),
    pred: wp.array(dtype=wp.float64),
    obs_prey: wp.array2d(dtype=wp.float64),
    obs_pred: wp.array2d(dtype=wp.float64),
    k: int,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    a = wp.log(prey[i]) - wp.log(obs_prey[k, i])
    b = wp.log(pred[i]) - wp.log(obs_pred[k, i])
    wp.atomic_add(loss, 0, a * a + b * b)


class PatchSurvey:
    def __init__(self, device, patches, steps, census_every, window=50):
        self.device = device
        self.n = patches
        self.steps = steps
        self.every = census_every
        self.window = window
        self.windows = (steps + window - 1) // window
        self.dt = 0.05
        self.conversion = 0.5
        self.mortality = 0.4
        self.capacity = 6.0
        rng = np.random.default_rng(5)
        self.prey0 = 1.0 + 0.5 * rng.random(patches)
        self.pred0 = 0.5 + 0.3 * rng.random(patches)
        true_growth = 0.9 + 0.3 * rng.random(patches)
        true_predation = 0.5 + 0.2 * rng.random(patches)
        self.growth = wp.array(np.full(patches, 1.0), dtype=wp.float64, requires_grad=True, device=device)
        self.predation = wp.array(np.full(patches, 0.6), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"growth": self.growth, "predation": self.predation}
        self.censuses = steps // census_every
        obs_x, obs_y = self._survey(true_growth, true_predation, rng)
        self.obs_prey = wp.array(obs_x, dtype=wp.float64, device=device)
        self.obs_pred = wp.array(obs_y, dtype=wp.float64, device=device)

    def _survey(self, g, p, rng):
        x, y = self.prey0.copy(), self.pred0.copy()
        ox, oy = [], []
        for t in range(1, self.steps + 1):
            dx = g * x * (1.0 - x / self.capacity) - p * x * y
            dy = self.conversion * p * x * y - self.mortality * y
            x, y = x + self.dt * dx, y + self.dt * dy
            if t % self.every == 0:
                ox.append(x * np.exp(0.05 * rng.standard_normal(self.n)))
                oy.append(y * np.exp(0.05 * rng.standard_normal(self.n)))
        return np.array(ox), np.array(oy)

    def _state(self, values=None):
        if values is None:
            return wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        return wp.array(values, dtype=wp.float64, requires_grad=True, device=self.device)

    def run_window(self, prey, pred, w, loss):
        for t in range(w * self.window, min((w + 1) * self.window, self.steps)):
            prey_n, pred_n = self._state(), self._state()
            wp.launch(
                lv_step,
                dim=self.n,
                inputs=[prey, pred, self.growth, self.predation, wp.float64(self.conversion), wp.float64(self.mortality), wp.float64(self.capacity), wp.float64(self.dt)],
                outputs=[prey_n, pred_n],
                device=self.device,
            )
            prey, pred = prey_n, pred_n
            if (t + 1) % self.every == 0:
                wp.launch(
                    census_misfit,
                    dim=self.n,
                    inputs=[prey, pred, self.obs_prey, self.obs_pred, (t + 1) // self.every - 1],
                    outputs=[loss],
                    device=self.device,
                )
        return prey, pred

    def objective(self):
        prey, pred = self._state(self.prey0), self._state(self.pred0)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device)
        for w in range(self.windows):
            prey, pred = self.run_window(prey, pred, w, loss)
        return float(loss.numpy()[0])

    def gradient(self):
        for arr in self.params.values():
            arr.grad.zero_()
        checkpoints = []
        prey, pred = self._state(self.prey0), self._state(self.pred0)
        scratch = wp.zeros(1, dtype=wp.float64, device=self.device)
        for w in range(self.windows):
            checkpoints.append((prey.numpy().copy(), pred.numpy().copy()))
            prey, pred = self.run_window(prey, pred, w, scratch)
        carry = None
        for w in reversed(range(self.windows)):
            prey0, pred0 = self._state(checkpoints[w][0]), self._state(checkpoints[w][1])
            loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
            tape = wp.Tape()
            with tape:
                prey1, pred1 = self.run_window(prey0, pred0, w, loss)
            if carry is not None:
                prey1.grad.assign(carry[0])
                pred1.grad.assign(carry[1])
            tape.backward(loss)
            carry = (prey0.grad, pred0.grad)
        return {k: arr.grad.numpy().copy() for k, arr in self.params.items()}


def make_problem(device, scale="small"):
    if scale == "production":
        return PatchSurvey(device, patches=16, steps=200, census_every=10)
    return PatchSurvey(device, patches=8, steps=40, census_every=5)
