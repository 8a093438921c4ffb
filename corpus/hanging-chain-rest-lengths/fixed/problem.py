import numpy as np
import warp as wp


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.vec2d),
    v: wp.array(dtype=wp.vec2d),
    rest: wp.array(dtype=wp.float64),
    stiffness: wp.float64,
    damping: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec2d),
    v_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    n = x.shape[0]
    xi = x[i]
    vi = v[i]
    if i == 0:
        x_out[i] = xi
        v_out[i] = wp.vec2d(wp.float64(0.0), wp.float64(0.0))
        return
    f = wp.vec2d(wp.float64(0.0), wp.float64(-9.81))
    d = x[i - 1] - xi
    l = wp.length(d)
    f = f + stiffness * (l - rest[i - 1]) / l * d
    if i < n - 1:
        e = x[i + 1] - xi
        m = wp.length(e)
        f = f + stiffness * (m - rest[i]) / m * e
    f = f - damping * vi
    v_new = vi + dt * f
    v_out[i] = v_new
    x_out[i] = xi + dt * v_new


@wp.kernel
def squared_error(
    x: wp.array(dtype=wp.vec2d),
    target: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class HangingChain:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.01
        self.stiffness = 60.0
        self.damping = 0.5
        xs = np.stack([np.linspace(0.0, 0.3 * (n - 1), n), np.zeros(n)], axis=1)
        self.x0 = xs
        self.target = wp.array(xs + np.stack([np.zeros(n), -0.02 * np.arange(n) ** 1.5], axis=1), dtype=wp.vec2d, device=device)
        rest = 0.3 + 0.02 * np.sin(np.arange(n - 1))
        self.rest = wp.array(rest, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"rest": self.rest}

    def initial_state(self):
        x = wp.array(self.x0, dtype=wp.vec2d, requires_grad=True, device=self.device)
        v = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
        return x, v

    def empty_state(self):
        x = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
        v = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
        return x, v

    def simulate(self):
        states = [self.initial_state()] + [self.empty_state() for _ in range(self.steps)]
        for t in range(self.steps):
            src = states[t]
            dst = states[t + 1]
            wp.launch(
                integrate,
                dim=self.n,
                inputs=[src[0], src[1], self.rest, wp.float64(self.stiffness), wp.float64(self.damping), wp.float64(self.dt)],
                outputs=[dst[0], dst[1]],
                device=self.device,
            )
        final = states[self.steps]
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(squared_error, dim=self.n, inputs=[final[0], self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.simulate().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.simulate()
        tape.backward(loss)
        grads = {"rest": self.rest.grad.numpy().copy()}
        tape.zero()
        return grads


def make_problem(device, scale="small"):
    if scale == "production":
        return HangingChain(device, n=16, steps=40)
    return HangingChain(device, n=6, steps=10)
