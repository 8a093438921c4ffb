import numpy as np
import warp as wp


@wp.kernel
def tether_forces(
    pos: wp.array(dtype=wp.vec3d),
    vel: wp.array(dtype=wp.vec3d),
    anchor: wp.array(dtype=wp.vec3d),
    stiffness: wp.array(dtype=wp.float64),
    tether_length: wp.float64,
    drag: wp.float64,
    weight: wp.float64,
    forces: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    d = pos[i] - anchor[i]
    ln = wp.length(d)
    f = -stiffness[i] * (ln - tether_length) / ln * d - drag * vel[i]
    forces[i] = f + wp.vec3d(wp.float64(0.0), wp.float64(0.0), -weight)


@wp.kernel
def buoyancy(lift: wp.array(dtype=wp.float64), forces: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    forces[i].z += lift[i]


@wp.kernel
def integrate(
    pos: wp.array(dtype=wp.vec3d),
    vel: wp.array(dtype=wp.vec3d),
    forces: wp.array(dtype=wp.vec3d),
    inv_mass: wp.float64,
    dt: wp.float64,
    pos_next: wp.array(dtype=wp.vec3d),
    vel_next: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    v = vel[i] + dt * inv_mass * forces[i]
    vel_next[i] = v
    pos_next[i] = pos[i] + dt * v


@wp.kernel
def position_error(
    pos: wp.array(dtype=wp.vec3d),
    target: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pos[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class AerostatRow:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.05
        self.inv_mass = 0.5
        self.tether_length = 3.0
        self.drag = 0.8
        self.weight = 2.0 * 9.81
        xs = np.linspace(0.0, 2.0 * (n - 1), n)
        anchor = np.stack([xs, np.zeros(n), np.zeros(n)], axis=1)
        self.anchor = wp.array(anchor, dtype=wp.vec3d, device=device)
        start = anchor + np.array([0.4, 0.0, 2.9])
        self.pos0 = wp.array(start, dtype=wp.vec3d, device=device)
        self.vel0 = wp.zeros(n, dtype=wp.vec3d, device=device)
        goal = anchor + np.stack([0.6 + 0.2 * np.sin(xs), 0.1 * np.cos(xs), 3.1 + 0.1 * np.cos(0.7 * xs)], axis=1)
        self.target = wp.array(goal, dtype=wp.vec3d, device=device)
        self.lift = wp.array(np.full(n, 22.0) + np.linspace(-1.0, 1.0, n), dtype=wp.float64, requires_grad=True, device=device)
        self.stiffness = wp.array(np.full(n, 30.0), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"lift": self.lift, "stiffness": self.stiffness}

    def forward(self):
        pos, vel = self.pos0, self.vel0
        for _ in range(self.steps):
            forces = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            wp.launch(
                tether_forces,
                dim=self.n,
                inputs=[pos, vel, self.anchor, self.stiffness, wp.float64(self.tether_length), wp.float64(self.drag), wp.float64(self.weight)],
                outputs=[forces],
                device=self.device,
            )
            wp.launch(buoyancy, dim=self.n, inputs=[self.lift], outputs=[forces], device=self.device)
            pos_next = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            vel_next = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            wp.launch(
                integrate,
                dim=self.n,
                inputs=[pos, vel, forces, wp.float64(self.inv_mass), wp.float64(self.dt)],
                outputs=[pos_next, vel_next],
                device=self.device,
            )
            pos, vel = pos_next, vel_next
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(position_error, dim=self.n, inputs=[pos, self.target], outputs=[loss], device=self.device)
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

    def train(self, iterations, lr=5.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return AerostatRow(device, n=64, steps=200)
    return AerostatRow(device, n=6, steps=30)
