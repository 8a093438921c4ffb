import numpy as np
import warp as wp

import hydraulics


@wp.kernel
def drop_misfit(
    drop: wp.array(dtype=wp.float64),
    measured: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    r = (drop[t] - measured[t]) / measured[t]
    wp.atomic_add(loss, 0, r * r)


class RoughnessSurvey:
    def __init__(self, device, n, tests):
        self.device = device
        self.n = n
        self.tests = tests
        rng = np.random.default_rng(3)
        self.diameter_np = rng.choice([0.1, 0.15, 0.2, 0.3], n)
        self.length_np = rng.uniform(80.0, 400.0, n)
        self.diameter = wp.array(self.diameter_np, dtype=wp.float64, device=device)
        self.length = wp.array(self.length_np, dtype=wp.float64, device=device)
        area = 0.25 * np.pi * self.diameter_np**2
        speeds = np.linspace(0.4, 1.8, tests)
        flow = np.concatenate([s * area for s in speeds])
        self.flow = wp.array(flow, dtype=wp.float64, device=device)
        self.velocity = wp.zeros(n * tests, dtype=wp.float64, device=device)
        wp.launch(hydraulics.pipe_velocity, dim=n * tests, inputs=[self.flow, self.diameter, n], outputs=[self.velocity], device=device)
        true_rough = rng.uniform(0.05, 1.5, n)
        true_k = rng.uniform(0.5, 3.0, n)
        self.measured = wp.array(self._drop_numpy(true_rough, true_k, flow), dtype=wp.float64, device=device)
        self.roughness = wp.array(np.full(n, 0.5), dtype=wp.float64, requires_grad=True, device=device)
        self.fitting_k = wp.array(np.full(n, 1.0), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"roughness": self.roughness, "fitting_k": self.fitting_k}

    def _drop_numpy(self, rough, k, flow):
        d = np.tile(self.diameter_np, self.tests)
        ln = np.tile(self.length_np, self.tests)
        v = flow / (0.25 * np.pi * d * d)
        re = v * d / 1.0e-6
        arg = np.tile(rough, self.tests) * 1.0e-3 / (3.7 * d) + 5.74 / re**0.9
        f = 0.25 / np.log10(arg) ** 2
        dyn = v * v / (2.0 * 9.81)
        return f * ln / d * dyn + np.tile(k, self.tests) * dyn

    def forward(self):
        m = self.n * self.tests
        drop = wp.zeros(m, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            hydraulics.head_drop,
            dim=m,
            inputs=[self.velocity, self.roughness, self.fitting_k, self.diameter, self.length, self.n],
            outputs=[drop],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(drop_misfit, dim=m, inputs=[drop, self.measured], outputs=[loss], device=self.device)
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

    def train(self, iterations, lr=0.2):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(np.maximum(v.numpy() - lr * g[k], 1.0e-3))
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return RoughnessSurvey(device, n=200, tests=6)
    return RoughnessSurvey(device, n=6, tests=3)
