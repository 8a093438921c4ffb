import numpy as np
import warp as wp


@wp.kernel
def particle_to_grid(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    mass: wp.array(dtype=wp.float64),
    inv_h: wp.float64,
    grid_mass: wp.array(dtype=wp.float64),
    grid_momentum: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    s = x[p] * inv_h
    base = wp.clamp(int(s), 0, grid_mass.shape[0] - 2)
    fx = s - wp.float64(base)
    m = mass[p]
    wp.atomic_add(grid_mass, base, (wp.float64(1.0) - fx) * m)
    wp.atomic_add(grid_mass, base + 1, fx * m)
    wp.atomic_add(grid_momentum, base, (wp.float64(1.0) - fx) * m * v[p])
    wp.atomic_add(grid_momentum, base + 1, fx * m * v[p])


@wp.kernel
def grid_update(
    grid_mass: wp.array(dtype=wp.float64),
    grid_momentum: wp.array(dtype=wp.float64),
    flow: wp.array(dtype=wp.float64),
    drag: wp.float64,
    dt: wp.float64,
    grid_v: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    m = grid_mass[i]
    if m > wp.float64(0.0):
        u = grid_momentum[i] / m
        grid_v[i] = u + dt * drag * (flow[i] - u) * wp.abs(flow[i] - u)
    else:
        grid_v[i] = wp.float64(0.0)


@wp.kernel
def grid_to_particle(
    x: wp.array(dtype=wp.float64),
    grid_v: wp.array(dtype=wp.float64),
    inv_h: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    s = x[p] * inv_h
    base = wp.clamp(int(s), 0, grid_v.shape[0] - 2)
    fx = s - wp.float64(base)
    vp = (wp.float64(1.0) - fx) * grid_v[base] + fx * grid_v[base + 1]
    v_out[p] = vp
    x_out[p] = x[p] + dt * vp


@wp.kernel
def gauge_error(
    x: wp.array(dtype=wp.float64),
    gauge: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    p = wp.tid()
    d = x[p] - gauge[p]
    wp.atomic_add(loss, 0, d * d)


class Grid:
    def __init__(self, nodes, device):
        self.nodes = nodes
        self.device = device
        self.mass = wp.zeros(nodes, dtype=wp.float64, requires_grad=True, device=device)
        self.momentum = wp.zeros(nodes, dtype=wp.float64, requires_grad=True, device=device)

    def clear(self):
        self.mass = wp.zeros(self.nodes, dtype=wp.float64, requires_grad=True, device=self.device)
        self.momentum = wp.zeros(self.nodes, dtype=wp.float64, requires_grad=True, device=self.device)


class ChannelRelease:
    def __init__(self, device, particles, nodes, steps):
        self.device = device
        self.n = particles
        self.steps = steps
        self.h = 1.0 / (nodes - 1)
        self.dt = 0.0015
        self.drag = 3.0
        self.grid = Grid(nodes, device)
        xs = np.linspace(0.0, 1.0, nodes)
        self.flow = wp.array(0.6 + 0.3 * np.sin(2.5 * xs), dtype=wp.float64, device=device)
        rng = np.random.default_rng(5)
        self.x0 = np.sort(rng.uniform(0.15, 0.35, particles))
        self.mass = wp.array(rng.uniform(0.5, 1.5, particles), dtype=wp.float64, device=device)
        self.gauge = wp.array(self.x0 + 0.08 + 0.02 * rng.standard_normal(particles), dtype=wp.float64, device=device)
        self.v0 = wp.array(rng.uniform(0.8, 1.6, particles), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"v0": self.v0}

    def forward(self):
        x = wp.array(self.x0, dtype=wp.float64, requires_grad=True, device=self.device)
        v = self.v0
        inv_h = wp.float64(1.0 / self.h)
        dt = wp.float64(self.dt)
        for _ in range(self.steps):
            self.grid.clear()
            wp.launch(
                particle_to_grid,
                dim=self.n,
                inputs=[x, v, self.mass, inv_h],
                outputs=[self.grid.mass, self.grid.momentum],
                device=self.device,
            )
            grid_v = wp.zeros(self.grid.nodes, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                grid_update,
                dim=self.grid.nodes,
                inputs=[self.grid.mass, self.grid.momentum, self.flow, wp.float64(self.drag), dt],
                outputs=[grid_v],
                device=self.device,
            )
            x_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            v_next = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(grid_to_particle, dim=self.n, inputs=[x, grid_v, inv_h, dt], outputs=[x_next, v_next], device=self.device)
            x, v = x_next, v_next
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(gauge_error, dim=self.n, inputs=[x, self.gauge], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = self.v0.grad.numpy().copy()
        tape.zero()
        return {"v0": g}

    def train(self, iterations, lr=150.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["v0"]
            self.v0.assign(self.v0.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return ChannelRelease(device, particles=256, nodes=65, steps=150)
    return ChannelRelease(device, particles=12, nodes=17, steps=40)
