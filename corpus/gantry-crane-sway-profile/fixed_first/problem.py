import numpy as np
import warp as wp


@wp.func
def soft_limit(u: wp.float64, umax: wp.float64) -> wp.float64:
    r = u / umax
    return u / wp.sqrt(wp.float64(1.0) + r * r)


@wp.func_grad(soft_limit)
def adj_soft_limit(u: wp.float64, umax: wp.float64, adj_ret: wp.float64):
    r = u / umax
    q = wp.float64(1.0) / (wp.float64(1.0) + r * r)
    wp.adjoint[u] = adj_ret * q * wp.sqrt(q)


@wp.kernel
def crane_step(
    state: wp.array(dtype=wp.vec4d),
    command: wp.array(dtype=wp.float64),
    knot: int,
    rope: wp.array(dtype=wp.float64),
    umax: wp.float64,
    effort_weight: wp.float64,
    dt: wp.float64,
    state_next: wp.array(dtype=wp.vec4d),
    effort: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    s = state[i]
    u = command[knot]
    a = soft_limit(u, umax)
    g = wp.float64(9.81)
    length = rope[i]
    alpha = -(g * wp.sin(s[2]) + a * wp.cos(s[2])) / length
    v = s[1] + dt * a
    w = s[3] + dt * alpha
    state_next[i] = wp.vec4d(s[0] + dt * v, v, s[2] + dt * w, w)
    wp.atomic_add(effort, 0, effort_weight * dt * u * u)


@wp.kernel
def transfer_cost(
    state: wp.array(dtype=wp.vec4d),
    effort: wp.array(dtype=wp.float64),
    rope: wp.array(dtype=wp.float64),
    goal: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    s = state[i]
    e = s[0] - goal
    sway = wp.float64(9.81) * rope[i] * (wp.float64(1.0) - wp.cos(s[2])) + wp.float64(0.5) * rope[i] * rope[i] * s[3] * s[3]
    c = wp.float64(4.0) * e * e + wp.float64(2.0) * s[1] * s[1] + wp.float64(10.0) * sway
    if i == 0:
        c = c + effort[0]
    wp.atomic_add(loss, 0, c)


class GantryCrane:
    def __init__(self, device, knots, substeps, ropes):
        self.device = device
        self.knots = knots
        self.substeps = substeps
        self.steps = knots * substeps
        self.ropes = len(ropes)
        self.dt = 0.05
        self.umax = 1.2
        self.effort_weight = 0.5
        self.goal = 3.0
        self.rope = wp.array(np.array(ropes), dtype=wp.float64, device=device)
        t = (np.arange(knots) + 0.5) / knots
        profile = 1.1 * np.sin(2.0 * np.pi * t) + 0.15
        self.command = wp.array(profile, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"command": self.command}

    def _forward(self):
        state = wp.zeros(self.ropes, dtype=wp.vec4d, device=self.device, requires_grad=True)
        effort = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        for k in range(self.steps):
            nxt = wp.zeros(self.ropes, dtype=wp.vec4d, device=self.device, requires_grad=True)
            wp.launch(
                crane_step,
                dim=self.ropes,
                inputs=[
                    state,
                    self.command,
                    k // self.substeps,
                    self.rope,
                    wp.float64(self.umax),
                    wp.float64(self.effort_weight),
                    wp.float64(self.dt),
                ],
                outputs=[nxt, effort],
                device=self.device,
            )
            state = nxt
        wp.launch(transfer_cost, dim=self.ropes, inputs=[state, effort, self.rope, wp.float64(self.goal)], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self._forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self._forward()
        tape.backward(loss)
        grads = {"command": self.command.grad.numpy().copy()}
        tape.zero()
        return grads

    def train(self, iterations, lr=0.004):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["command"]
            self.command.assign(self.command.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return GantryCrane(device, knots=40, substeps=10, ropes=[4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0])
    return GantryCrane(device, knots=12, substeps=8, ropes=[5.0, 8.0, 12.0])
