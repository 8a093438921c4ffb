import numpy as np
import warp as wp

from rollout import simulate


@wp.kernel
def trajectory_loss(
    start: wp.array(dtype=wp.float64),
    rest: wp.array(dtype=wp.float64),
    final: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = final[i] - target[i]
    r = start[i] - rest[i]
    wp.atomic_add(loss, 0, d * d + weight * r * r)


class Problem:
    def __init__(self, device, n, steps):
        self.device = device
        self.steps = steps
        self.stiffness = 4.0
        self.damping = 0.3
        self.dt = 0.02
        self.weight = 0.5
        rng = np.random.default_rng(7)
        x_init = rng.uniform(-1.0, 1.0, n)
        self.params = {
            "x0": wp.array(x_init, dtype=wp.float64, device=device, requires_grad=True),
        }
        self.v0 = wp.zeros(n, dtype=wp.float64, device=device, requires_grad=True)
        self.rest = wp.array(x_init + rng.uniform(-0.2, 0.2, n), dtype=wp.float64, device=device)
        self.target = wp.array(rng.uniform(-0.5, 0.5, n), dtype=wp.float64, device=device)
        self.tape = wp.Tape()

    def _loss(self):
        start, final = simulate(
            self.params["x0"], self.v0, self.steps, self.stiffness, self.damping, self.dt
        )
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        n = final.shape[0]
        wp.launch(
            trajectory_loss,
            dim=n,
            inputs=[start, self.rest, final, self.target, wp.float64(self.weight)],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self._loss().numpy()[0])

    def gradient(self):
        self.tape.reset()
        self.v0.grad.zero_()
        with self.tape:
            loss = self._loss()
        self.tape.backward(loss)
        out = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        self.tape.zero()
        return out

    def train(self, iterations, lr=0.2):
        losses = []
        x0 = self.params["x0"]
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["x0"]
            x0.assign(x0.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n=16, steps=100)
    return Problem(device, n=8, steps=20)
