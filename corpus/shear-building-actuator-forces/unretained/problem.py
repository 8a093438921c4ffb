import numpy as np
import warp as wp


@wp.kernel
def storey_step(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    stiffness: wp.array(dtype=wp.float64),
    mass: wp.array(dtype=wp.float64),
    damping: wp.float64,
    force: wp.array(dtype=wp.float64),
    drive: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = x.shape[0]
    below = wp.float64(0.0)
    v_below = wp.float64(0.0)
    if i > 0:
        below = x[i - 1]
        v_below = v[i - 1]
    f = stiffness[i] * (below - x[i]) + damping * (v_below - v[i])
    if i < n - 1:
        f = f + stiffness[i + 1] * (x[i + 1] - x[i]) + damping * (v[i + 1] - v[i])
    f = f + force[i] * drive
    vn = v[i] + dt * f / mass[i]
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def drift_target(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, d * d + wp.float64(0.1) * v[i] * v[i])


class ShearBuilding:
    def __init__(self, device, floors, steps):
        self.device = device
        self.floors = floors
        self.steps = steps
        self.dt = 0.01
        self.damping = 0.4
        self.omega = 3.0
        h = np.arange(1, floors + 1) / floors
        self.stiffness = wp.array(400.0 * (1.2 - 0.5 * h), dtype=wp.float64, device=device)
        self.mass = wp.array(1.0 + 0.2 * np.cos(3.0 * h), dtype=wp.float64, device=device)
        self.target = wp.array(0.05 * h * h, dtype=wp.float64, device=device)
        self.force = wp.array(2.0 * np.sin(2.0 * h + 0.3), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"force": self.force}
        self.state_sensitivity = None

    def _buffer(self):
        a = wp.zeros(self.floors, dtype=wp.float64, requires_grad=True, device=self.device)
        return a

    def forward(self):
        xs = [self._buffer() for _ in range(2)]
        vs = [self._buffer() for _ in range(2)]
        for t in range(self.steps):
            src, dst = t % 2, (t + 1) % 2
            drive = np.sin(self.omega * self.dt * t)
            wp.launch(
                storey_step,
                dim=self.floors,
                inputs=[xs[src], vs[src], self.stiffness, self.mass, wp.float64(self.damping), self.force, wp.float64(drive), wp.float64(self.dt)],
                outputs=[xs[dst], vs[dst]],
                device=self.device,
            )
        x_end, v_end = xs[self.steps % 2], vs[self.steps % 2]
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(drift_target, dim=self.floors, inputs=[x_end, v_end, self.target], outputs=[loss], device=self.device)
        return loss, x_end

    def objective(self):
        return float(self.forward()[0].numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss, x_end = self.forward()
        tape.backward(loss)
        self.state_sensitivity = x_end.grad.numpy().copy()
        out = {"force": self.force.grad.numpy().copy()}
        tape.zero()
        return out


def make_problem(device, scale="small"):
    if scale == "production":
        return ShearBuilding(device, floors=40, steps=400)
    return ShearBuilding(device, floors=8, steps=60)
