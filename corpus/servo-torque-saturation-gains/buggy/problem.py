import numpy as np
import warp as wp

import servo


def pade(z):
    return z * (27.0 + z * z) / (27.0 + 9.0 * z * z)


class ServoBank:
    def __init__(self, device, n_joints, n_samples):
        rng = np.random.default_rng(41)
        self.device = device
        self.shape = (n_joints, n_samples)
        self.tau_max = 2.0
        true_gain = rng.uniform(0.8, 1.6, n_joints)
        command = rng.uniform(-1.5, 1.5, (n_joints, n_samples))
        measured = self.tau_max * pade(true_gain[:, None] * command / self.tau_max) + 0.01 * rng.standard_normal((n_joints, n_samples))
        self.command = wp.array(command, dtype=wp.float64, device=device)
        self.measured = wp.array(measured, dtype=wp.float64, device=device)
        self.gain = wp.array(np.full(n_joints, 1.2), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"gain": self.gain}

    def run(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            servo.torque_misfit,
            dim=self.shape,
            inputs=[self.gain, self.command, self.measured, wp.float64(self.tau_max)],
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
        g = self.gain.grad.numpy().copy()
        tape.zero()
        return {"gain": g}


def make_problem(device, scale="small"):
    if scale == "production":
        return ServoBank(device, n_joints=32, n_samples=256)
    return ServoBank(device, n_joints=6, n_samples=8)
