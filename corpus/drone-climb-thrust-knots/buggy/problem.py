import numpy as np
import warp as wp


@wp.kernel
def sample_schedule(knots: wp.array(dtype=wp.float64), steps: int, thrust: wp.array(dtype=wp.float64)):
    t = wp.tid()
    nk = knots.shape[0]
    s = wp.float64(t) * wp.float64(nk - 1) / wp.float64(steps - 1)
    k = wp.min(int(s), nk - 2)
    a = s - wp.float64(k)
    thrust[t] = (wp.float64(1.0) - a) * knots[k] + a * knots[k + 1]


@wp.kernel
def climb_step(
    z: wp.array(dtype=wp.float64),
    vz: wp.array(dtype=wp.float64),
    thrust: wp.array(dtype=wp.float64),
    t: int,
    inv_mass: wp.float64,
    gravity: wp.float64,
    drag: wp.float64,
    dt: wp.float64,
    reference: wp.array(dtype=wp.float64),
    z_out: wp.array(dtype=wp.float64),
    vz_out: wp.array(dtype=wp.float64),
    cost: wp.array(dtype=wp.float64),
):
    v = vz[0]
    u = thrust[t]
    a = u * inv_mass - gravity - drag * v * wp.abs(v)
    vn = v + dt * a
    zn = z[0] + dt * vn
    vz_out[0] = vn
    z_out[0] = zn
    e = zn - reference[t]
    wp.atomic_add(cost, 0, e * e + wp.float64(1.0e-3) * u * u)


@wp.kernel
def knot_smoothness(knots: wp.array(dtype=wp.float64), weight: wp.float64, cost: wp.array(dtype=wp.float64)):
    k = wp.tid()
    d = knots[k + 1] - knots[k]
    wp.atomic_add(cost, 0, weight * d * d)


class ClimbProfile:
    def __init__(self, device, knots, steps):
        self.device = device
        self.steps = steps
        self.dt = 0.05
        self.mass = 1.4
        self.gravity = 9.81
        self.drag = 0.08
        time = np.arange(1, steps + 1) * self.dt
        horizon = steps * self.dt
        self.reference = wp.array(12.0 * (1.0 - np.cos(np.pi * time / horizon)) / 2.0, dtype=wp.float64, device=device)
        hover = self.mass * self.gravity
        rng = np.random.default_rng(9)
        self.knots = wp.array(hover + rng.uniform(-1.0, 3.0, knots), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"knots": self.knots}

    def schedule(self):
        thrust = wp.zeros(self.steps, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(sample_schedule, dim=self.steps, inputs=[self.knots, self.steps], outputs=[thrust], device=self.device)
        return thrust

    def rollout(self, thrust):
        cost = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        z = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        vz = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for t in range(self.steps):
            z_next = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
            vz_next = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                climb_step,
                dim=1,
                inputs=[
                    z,
                    vz,
                    thrust,
                    t,
                    wp.float64(1.0 / self.mass),
                    wp.float64(self.gravity),
                    wp.float64(self.drag),
                    wp.float64(self.dt),
                    self.reference,
                ],
                outputs=[z_next, vz_next, cost],
                device=self.device,
            )
            z, vz = z_next, vz_next
        nk = self.knots.shape[0]
        wp.launch(knot_smoothness, dim=nk - 1, inputs=[self.knots, wp.float64(0.5)], outputs=[cost], device=self.device)
        return cost

    def objective(self):
        return float(self.rollout(self.schedule()).numpy()[0])

    def gradient(self):
        thrust = self.schedule()
        tape = wp.Tape()
        with tape:
            cost = self.rollout(thrust)
        tape.backward(cost)
        g = self.knots.grad.numpy().copy()
        tape.zero()
        return {"knots": g}

    def train(self, iterations, lr=0.01):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["knots"]
            self.knots.assign(self.knots.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return ClimbProfile(device, knots=16, steps=200)
    return ClimbProfile(device, knots=8, steps=40)
