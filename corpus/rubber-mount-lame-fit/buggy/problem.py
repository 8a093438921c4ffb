import numpy as np
import warp as wp

import materials


class MountFit:
    def __init__(self, device, n):
        rng = np.random.default_rng(17)
        self.device = device
        self.n = n
        strain = 0.05 * rng.standard_normal((n, 3))
        mu_true = rng.uniform(0.8, 1.2, n)
        lam_true = rng.uniform(2.0, 3.0, n)
        tr = strain.sum(axis=1)
        measured = mu_true * (strain * strain).sum(axis=1) + 0.5 * lam_true * tr * tr
        self.measured = wp.array(measured * 1.0e3, dtype=wp.float64, device=device)
        self.strain = wp.array(strain * np.sqrt(1.0e3), dtype=wp.vec3d, device=device)
        self.mu = wp.array(np.full(n, 1.0), dtype=wp.float64, requires_grad=True, device=device)
        self.lam = wp.array(np.full(n, 2.5), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"mu": self.mu, "lam": self.lam}

    def run(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            materials.mount_energy,
            dim=self.n,
            inputs=[self.mu, self.lam, self.strain, self.measured],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        out = {"mu": self.mu.grad.numpy().copy(), "lam": self.lam.grad.numpy().copy()}
        tape.zero()
        return out


def make_problem(device, scale="small"):
    if scale == "production":
        return MountFit(device, n=1024)
    return MountFit(device, n=8)
