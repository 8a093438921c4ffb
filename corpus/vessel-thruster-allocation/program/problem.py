import numpy as np
import warp as wp

LIMIT = 1.0


@wp.func
def delivered_thrust(u: wp.float64):
    return wp.clamp(u, wp.float64(-LIMIT), wp.float64(LIMIT))


@wp.func_grad(delivered_thrust)
def adj_delivered_thrust(u: wp.float64, adj_ret: wp.float64):
    wp.adjoint[u] += adj_ret


@wp.kernel
def allocate(
    command: wp.array2d(dtype=wp.float64),
    geometry: wp.array(dtype=wp.vec3d),
    wrench: wp.array(dtype=wp.vec3d),
):
    c, k = wp.tid()
    wp.atomic_add(wrench, c, delivered_thrust(command[c, k]) * geometry[k])


@wp.kernel
def allocation_cost(
    wrench: wp.array(dtype=wp.vec3d),
    demand: wp.array(dtype=wp.vec3d),
    command: wp.array2d(dtype=wp.float64),
    effort: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    c = wp.tid()
    e = wrench[c] - demand[c]
    total = wp.dot(e, e)
    for k in range(command.shape[1]):
        total = total + effort * command[c, k] * command[c, k]
    wp.atomic_add(loss, 0, total)


class ThrustAllocation:
    def __init__(self, device, n_cases):
        self.device = device
        self.n_cases = n_cases
        rng = np.random.default_rng(31)
        angle = np.array([0.0, 0.0, np.pi / 2, np.pi / 2, 0.8, -0.8])
        pos = np.array([[-30.0, 6.0], [-30.0, -6.0], [25.0, 0.0], [-5.0, 0.0], [20.0, 4.0], [20.0, -4.0]]) / 30.0
        geo = np.stack([np.cos(angle), np.sin(angle), pos[:, 0] * np.sin(angle) - pos[:, 1] * np.cos(angle)], axis=1)
        self.geometry_np = geo
        self.demand_np = rng.normal(0.0, 1.5, size=(n_cases, 3))
        self.effort = 0.01
        self.geometry = wp.array(geo, dtype=wp.vec3d, device=device)
        self.demand = wp.array(self.demand_np, dtype=wp.vec3d, device=device)
        start = np.linalg.lstsq(geo.T, self.demand_np.T, rcond=None)[0].T
        start[np.abs(np.abs(start) - LIMIT) < 1e-3] += 0.01
        self.command = wp.array(start, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"command": self.command}

    def forward(self):
        wrench = wp.zeros(self.n_cases, dtype=wp.vec3d, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(allocate, dim=(self.n_cases, 6), inputs=[self.command, self.geometry], outputs=[wrench],
                  device=self.device)
        wp.launch(allocation_cost, dim=self.n_cases,
                  inputs=[wrench, self.demand, self.command, wp.float64(self.effort)], outputs=[loss],
                  device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"command": self.command.grad.numpy().copy()}
        tape.zero()
        return g

    def reference_gradient(self):
        u = self.command.numpy().astype(np.float64)
        delivered = np.clip(u, -LIMIT, LIMIT)
        e = delivered @ self.geometry_np - self.demand_np
        return {"command": 2.0 * e @ self.geometry_np.T + 2.0 * self.effort * u}

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["command"]
            self.command.assign(self.command.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    return ThrustAllocation(device, 64 if scale == "production" else 4)
