import numpy as np
import warp as wp


@wp.kernel
def slide_step(
    x: wp.array(dtype=wp.vec2d),
    v: wp.array(dtype=wp.vec2d),
    push: wp.array(dtype=wp.vec2d),
    mu: wp.array(dtype=wp.float64),
    mass: wp.array(dtype=wp.float64),
    gravity: wp.float64,
    v_eps: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec2d),
    v_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    vi = v[i]
    speed = wp.length(vi)
    normal = mass[i] * gravity
    friction = wp.where(speed > v_eps, -mu[i] * normal * vi / wp.max(speed, v_eps), -mu[i] * normal * vi / v_eps)
    vn = vi + dt * (push[i] + friction) / mass[i]
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def landing_error(
    x: wp.array(dtype=wp.vec2d),
    target: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = x[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(r, r))


class CratePush:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.02
        self.gravity = 9.81
        self.v_eps = 1.0e-3
        rng = np.random.default_rng(23)
        self.mass = wp.array(rng.uniform(5.0, 15.0, n), dtype=wp.float64, device=device)
        x0 = np.stack([np.arange(n) * 1.5, np.zeros(n)], axis=1)
        self.x0 = wp.array(x0, dtype=wp.vec2d, device=device)
        self.target = wp.array(x0 + rng.uniform(0.2, 0.6, size=(n, 2)), dtype=wp.vec2d, device=device)
        m = self.mass.numpy()
        push = np.stack([m * rng.uniform(6.0, 8.0, n), m * rng.uniform(5.0, 7.0, n)], axis=1)
        self.push = wp.array(push, dtype=wp.vec2d, device=device, requires_grad=True)
        self.mu = wp.array(rng.uniform(0.3, 0.5, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"push": self.push, "mu": self.mu}

    def loss(self):
        x = self.x0
        v = wp.zeros(self.n, dtype=wp.vec2d, device=self.device, requires_grad=True)
        for _ in range(self.steps):
            x_next = wp.zeros(self.n, dtype=wp.vec2d, device=self.device, requires_grad=True)
            v_next = wp.zeros(self.n, dtype=wp.vec2d, device=self.device, requires_grad=True)
            wp.launch(
                slide_step,
                dim=self.n,
                inputs=[
                    x,
                    v,
                    self.push,
                    self.mu,
                    self.mass,
                    wp.float64(self.gravity),
                    wp.float64(self.v_eps),
                    wp.float64(self.dt),
                ],
                outputs=[x_next, v_next],
                device=self.device,
            )
            x, v = x_next, v_next
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(landing_error, dim=self.n, inputs=[x, self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.5):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return CratePush(device, n=32, steps=60)
    return CratePush(device, n=4, steps=20)
