import numpy as np
import warp as wp

from table import VibratingTable


@wp.kernel
def track_error(
    x: wp.array(dtype=wp.float64),
    recorded: wp.array(dtype=wp.float64),
    weight: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - recorded[i]
    wp.atomic_add(loss, 0, weight * d * d)


class FeederCalibration:
    def __init__(self, device, lanes, steps, every):
        self.device = device
        self.steps = steps
        self.every = every
        self.table = VibratingTable(device, lanes, steps)
        rng = np.random.default_rng(3)
        self.x0 = wp.array(0.004 + 0.002 * rng.random(lanes), dtype=wp.float64, device=device)
        self.v0 = wp.array(0.05 * rng.standard_normal(lanes), dtype=wp.float64, device=device)
        true_k = 9.81 * (1.5 + 0.5 * rng.random(lanes))
        self.stiffness = wp.array(9.81 * np.full(lanes, 1.8), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"stiffness": self.stiffness}
        probe = wp.array(true_k, dtype=wp.float64, device=device)
        states = self.table.rollout(self.x0, self.v0, probe)
        self.recorded = [wp.array(s.numpy(), dtype=wp.float64, device=device) for s in states]

    def _loss(self, states):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for t in range(self.every - 1, self.steps, self.every):
            wp.launch(
                track_error,
                dim=self.table.lanes,
                inputs=[states[t], self.recorded[t], wp.float64(1.0e4)],
                outputs=[loss],
                device=self.device,
            )
        return loss

    def objective(self):
        states = self.table.rollout(self.x0, self.v0, self.stiffness)
        return float(self._loss(states).numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        states = self.table.rollout(self.x0, self.v0, self.stiffness, tape=tape)
        with tape:
            loss = self._loss(states)
        tape.backward(loss)
        out = {"stiffness": self.stiffness.grad.numpy().copy()}
        tape.zero()
        return out

    def train(self, iterations, lr=0.5):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["stiffness"]
            self.stiffness.assign(self.stiffness.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return FeederCalibration(device, lanes=32, steps=200, every=10)
    return FeederCalibration(device, lanes=8, steps=60, every=10)
