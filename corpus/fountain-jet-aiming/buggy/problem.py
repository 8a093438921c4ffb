import numpy as np
import warp as wp


@wp.kernel
def step_droplets(
    x: wp.array(dtype=wp.vec2d),
    v: wp.array(dtype=wp.vec2d),
    drag: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec2d),
    v_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    vi = v[i]
    a = wp.vec2d(wp.float64(0.0), wp.float64(-9.81)) - drag * wp.length(vi) * vi
    v_new = vi + dt * a
    v_out[i] = v_new
    x_out[i] = x[i] + dt * v_new


@wp.kernel
def miss_distance(
    x: wp.array(dtype=wp.vec2d),
    target: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Fountain:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.04
        self.drag = 0.05
        k = np.arange(n)
        self.nozzles = np.stack([0.25 * k, np.zeros(n)], axis=1)
        self.target = wp.array(np.stack([0.25 * k + 1.2 + 0.1 * k, 0.4 + 0.05 * k], axis=1), dtype=wp.vec2d, device=device)
        v0 = np.stack([2.0 + 0.1 * np.cos(k), 4.0 + 0.2 * np.sin(k)], axis=1)
        self.v0 = wp.array(v0, dtype=wp.vec2d, requires_grad=True, device=device)
        self.params = {"v0": self.v0}

    def forward(self):
        x = wp.array(self.nozzles, dtype=wp.vec2d, requires_grad=True, device=self.device)
        v = self.v0
        for _ in range(self.steps):
            x_next = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
            v_next = wp.zeros(self.n, dtype=wp.vec2d, requires_grad=True, device=self.device)
            wp.launch(
                step_droplets,
                dim=self.n,
                inputs=[x, v, wp.float64(self.drag), wp.float64(self.dt)],
                outputs=[x_next, v_next],
                device=self.device,
            )
            x, v = x_next, v_next
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(miss_distance, dim=self.n, inputs=[x, self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {"v0": self.v0.grad.numpy().copy()}
        return grads


def make_problem(device, scale="small"):
    if scale == "production":
        return Fountain(device, n=32, steps=40)
    return Fountain(device, n=6, steps=15)
