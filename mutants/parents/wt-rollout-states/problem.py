import numpy as np
import warp as wp


@wp.kernel
def step(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.float64),
         dt: wp.float64, x_out: wp.array(dtype=wp.float64), v_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = -k[i] * x[i] - wp.float64(0.1) * v[i] * v[i] * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def final_error(x: wp.array(dtype=wp.float64), target: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, d * d)


class Rollout:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.k = wp.array(np.linspace(1.0, 3.0, n), dtype=wp.float64, device=device, requires_grad=True)
        self.x0 = np.linspace(0.5, 1.0, n)
        self.target = wp.array(np.linspace(-0.2, 0.4, n), dtype=wp.float64, device=device)
        self.params = {"k": self.k}

    def forward(self):
        xs = [wp.array(self.x0, dtype=wp.float64, device=self.device, requires_grad=True)]
        vs = [wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)]
        for _ in range(self.steps):
            xs.append(wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True))
            vs.append(wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True))
        for t in range(self.steps):
            wp.launch(step, dim=self.n, inputs=[xs[t], vs[t], self.k, wp.float64(0.05)], outputs=[xs[t + 1], vs[t + 1]], device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(final_error, dim=self.n, inputs=[xs[self.steps], self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"k": self.k.grad.numpy().copy()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    if scale == "production":
        return Rollout(device, 32, 60)
    return Rollout(device, 4, 8)
