import numpy as np
import warp as wp

from cloth import ClothPanel


@wp.kernel
def marker_error(
    x: wp.array(dtype=wp.vec3d),
    observed: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - observed[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class StiffnessFit:
    def __init__(self, device, rows, cols, steps):
        self.device = device
        self.steps = steps
        self.panel = ClothPanel(rows, cols, 0.1, device)
        rng = np.random.default_rng(11)
        ns = self.panel.num_springs
        self.x_start = self.panel.rest_positions.copy()
        self.x_start[:, 1] += 0.02 * rng.standard_normal(rows * cols)
        self.x_start[:cols, 1] = 0.0
        true_k = 60.0 + 20.0 * rng.uniform(size=ns)
        self.stiffness = wp.array(np.full(ns, 70.0), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"stiffness": self.stiffness}
        k_true = wp.array(true_k, dtype=wp.float64, device=device)
        x, _ = self._state()
        observed = self.panel.simulate(k_true, x, self._state()[1], steps)
        self.observed = wp.array(observed.numpy() + 0.002 * rng.standard_normal((rows * cols, 3)), dtype=wp.vec3d, device=device)

    def _state(self):
        x = wp.array(self.x_start, dtype=wp.vec3d, requires_grad=True, device=self.device)
        v = wp.zeros(self.x_start.shape[0], dtype=wp.vec3d, requires_grad=True, device=self.device)
        return x, v

    def forward(self):
        x, v = self._state()
        final = self.panel.simulate(self.stiffness, x, v, self.steps)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(marker_error, dim=final.shape[0], inputs=[final, self.observed], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = self.stiffness.grad.numpy().copy()
        tape.zero()
        return {"stiffness": g}

    def train(self, iterations, lr=1.0e6):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["stiffness"]
            self.stiffness.assign(self.stiffness.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return StiffnessFit(device, rows=6, cols=6, steps=120)
    return StiffnessFit(device, rows=3, cols=3, steps=30)
