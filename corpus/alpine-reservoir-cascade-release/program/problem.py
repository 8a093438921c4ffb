import numpy as np
import warp as wp


@wp.kernel
def stored_energy(
    volume0: wp.array(dtype=float),
    elevation: wp.array(dtype=float),
    release: wp.array(dtype=float),
    level_slope: float,
    tail_elevation: float,
    energy: wp.array(dtype=float),
):
    k = wp.tid()
    if k == release.shape[0] - 1:
        wp.atomic_add(energy, 0, release[k] * tail_elevation)
    inflow = float(0.0)
    if k > 0:
        inflow = release[k - 1]
    v = volume0[k] - release[k] + inflow
    wp.atomic_add(energy, 0, v * (elevation[k] + level_slope * v))


@wp.kernel
def plan_cost(
    energy: wp.array(dtype=float),
    energy_before: float,
    release: wp.array(dtype=float),
    demand: wp.array(dtype=float),
    weight: float,
    cost: wp.array(dtype=float),
):
    k = wp.tid()
    if k == 0:
        wp.atomic_add(cost, 0, energy[0] - energy_before)
    d = release[k] - demand[k]
    wp.atomic_add(cost, 0, weight * d * d)


class Cascade:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(4)
        self.elevation_np = (np.linspace(1900.0, 1400.0, n) + rng.uniform(-5.0, 5.0, n)).astype(np.float32)
        self.volume0_np = rng.uniform(60.0, 140.0, n).astype(np.float32)
        self.demand_np = rng.uniform(0.5, 2.0, n).astype(np.float32)
        self.level_slope = 0.05
        self.tail_elevation = 1350.0
        self.weight = 25.0
        self.elevation = wp.array(self.elevation_np, dtype=float, device=device)
        self.volume0 = wp.array(self.volume0_np, dtype=float, device=device)
        self.demand = wp.array(self.demand_np, dtype=float, device=device)
        v = self.volume0_np.astype(np.float64)
        self.energy_before = float(np.sum(v * (self.elevation_np + self.level_slope * v)))
        self.release = wp.array(self.demand_np * 1.1, dtype=float, requires_grad=True, device=device)
        self.params = {"release": self.release}

    def forward(self):
        energy = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        cost = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        wp.launch(stored_energy, dim=self.n, inputs=[self.volume0, self.elevation, self.release, self.level_slope,
                                                    self.tail_elevation],
                  outputs=[energy], device=self.device)
        wp.launch(plan_cost, dim=self.n,
                  inputs=[energy, self.energy_before, self.release, self.demand, self.weight],
                  outputs=[cost], device=self.device)
        return cost

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            cost = self.forward()
        tape.backward(cost)
        g = {"release": self.release.grad.numpy().copy()}
        tape.zero()
        return g

    def reference_gradient(self):
        q = self.release.numpy().astype(np.float64)
        z = self.elevation_np.astype(np.float64)
        inflow = np.concatenate([[0.0], q[:-1]])
        v = self.volume0_np.astype(np.float64) - q + inflow
        de_dv = z + 2.0 * self.level_slope * v
        g = -de_dv
        g[:-1] += de_dv[1:]
        g[-1] += self.tail_elevation
        g += 2.0 * self.weight * (q - self.demand_np.astype(np.float64))
        return {"release": g}

    def train(self, iterations, lr=2e-3):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["release"]
            self.release.assign(np.maximum(self.release.numpy() - lr * g, 0.0))
        return losses


def make_problem(device, scale="small"):
    return Cascade(device, 64 if scale == "production" else 12)
