import numpy as np
import warp as wp


@wp.struct
class StoneState:
    pos: wp.array(dtype=wp.vec2d)
    vel: wp.array(dtype=wp.vec2d)
    acc: wp.array(dtype=wp.vec2d)


@wp.kernel
def ice_friction(state: StoneState, spin: wp.array(dtype=wp.float64), mu_g: wp.float64, curl: wp.float64):
    i = wp.tid()
    v = state.vel[i]
    speed = wp.sqrt(wp.dot(v, v) + wp.float64(1.0e-4))
    side = wp.vec2d(-v[1], v[0])
    state.acc[i] = (-mu_g * v + curl * spin[i] * side) / speed


@wp.kernel
def advance(state: StoneState, dt: wp.float64):
    i = wp.tid()
    v = state.vel[i] + dt * state.acc[i]
    state.vel[i] = v
    state.pos[i] = state.pos[i] + dt * v


@wp.kernel
def placement_error(
    pos: wp.array(dtype=wp.vec2d),
    goal: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pos[i] - goal[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class CurlingDelivery:
    def __init__(self, device, stones, steps):
        self.device = device
        self.stones = stones
        self.steps = steps
        self.dt = 0.05
        self.mu_g = 0.0168 * 9.81
        self.curl = 0.012
        rng = np.random.default_rng(21)
        start = np.stack([rng.uniform(-0.6, 0.6, stones), np.zeros(stones)], axis=1)
        self.start = start
        self.spin = wp.array(rng.choice([-1.0, 1.0], stones), dtype=wp.float64, device=device)
        goal = start + np.stack([rng.uniform(-0.3, 0.3, stones), rng.uniform(4.5, 5.5, stones)], axis=1)
        self.goal = wp.array(goal, dtype=wp.vec2d, device=device)
        v0 = np.stack([rng.uniform(-0.1, 0.1, stones), rng.uniform(1.9, 2.3, stones)], axis=1)
        self.v0 = wp.array(v0, dtype=wp.vec2d, requires_grad=True, device=device)
        self.params = {"v0": self.v0}

    def initial_state(self):
        s = StoneState()
        s.pos = wp.array(self.start, dtype=wp.vec2d, requires_grad=True, device=self.device)
        s.vel = wp.clone(self.v0)
        s.acc = wp.zeros(self.stones, dtype=wp.vec2d, requires_grad=True, device=self.device)
        return s

    def forward(self):
        state = self.initial_state()
        for _ in range(self.steps):
            wp.launch(
                ice_friction,
                dim=self.stones,
                inputs=[state, self.spin, wp.float64(self.mu_g), wp.float64(self.curl)],
                device=self.device,
            )
            wp.launch(advance, dim=self.stones, inputs=[state, wp.float64(self.dt)], device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(placement_error, dim=self.stones, inputs=[state.pos, self.goal], outputs=[loss], device=self.device)
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

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["v0"]
            self.v0.assign(self.v0.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return CurlingDelivery(device, stones=64, steps=120)
    return CurlingDelivery(device, stones=8, steps=60)
