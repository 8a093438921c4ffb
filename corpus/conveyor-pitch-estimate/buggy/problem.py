import numpy as np
import warp as wp


@wp.kernel
def phase_misfit(
    t: wp.array(dtype=wp.float64),
    pitch: wp.array(dtype=wp.float64),
    seen: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    p = wp.mod(t[i], pitch[0])
    d = p - seen[i]
    wp.atomic_add(loss, 0, d * d)


class PitchEstimate:
    def __init__(self, device, n):
        rng = np.random.default_rng(17)
        self.device = device
        self.n = n
        k = rng.integers(1, 6, size=n)
        self.t = wp.array(k * 0.5 + rng.uniform(0.15, 0.3, size=n), dtype=wp.float64, device=device)
        self.pitch = wp.array(np.array([0.52]), dtype=wp.float64, requires_grad=True, device=device)
        self.seen = wp.array(rng.uniform(0.2, 0.3, size=n), dtype=wp.float64, device=device)
        self.params = {"pitch": self.pitch}

    def run(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(phase_misfit, dim=self.n, inputs=[self.t, self.pitch, self.seen], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        g = self.pitch.grad.numpy().copy()
        tape.zero()
        return {"pitch": g}

    def train(self, iterations):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            self.pitch.assign(self.pitch.numpy() - 0.001 * self.gradient()["pitch"])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return PitchEstimate(device, n=4096)
    return PitchEstimate(device, n=12)
