import numpy as np
import warp as wp

import imu


class TriadFit:
    def __init__(self, device, n_poses):
        rng = np.random.default_rng(11)
        self.device = device
        self.n = n_poses
        dirs = rng.standard_normal((n_poses, 3))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        g_ref = 9.81 * dirs
        true_bias = np.array([0.12, -0.08, 0.2])
        true_gain = 1.04
        raw = g_ref.copy()
        raw[:, 2] /= true_gain
        raw += true_bias + 0.01 * rng.standard_normal(raw.shape)
        self.raw = wp.array(raw, dtype=wp.vec3d, device=device)
        self.g_ref = wp.array(g_ref, dtype=wp.vec3d, device=device)
        self.bias = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=device)
        self.gain = wp.array([1.0], dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"bias": self.bias, "gain": self.gain}

    def run(self):
        unbiased = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
        acc = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(imu.remove_bias, dim=self.n, inputs=[self.raw, self.bias], outputs=[unbiased], device=self.device)
        wp.launch(imu.scale_vertical, dim=self.n, inputs=[unbiased, self.gain], outputs=[acc], device=self.device)
        wp.launch(
            imu.gravity_residual,
            dim=self.n,
            inputs=[acc, self.g_ref, wp.float64(1.0 / self.n)],
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
        out = {"bias": self.bias.grad.numpy().copy(), "gain": self.gain.grad.numpy().copy()}
        tape.zero()
        return out

    def train(self, iterations, lr=0.02):
        losses = []
        for _ in range(iterations):
            g = self.gradient()
            self.bias.assign(self.bias.numpy() - lr * g["bias"])
            self.gain.assign(self.gain.numpy() - lr * g["gain"])
            losses.append(self.objective())
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return TriadFit(device, n_poses=512)
    return TriadFit(device, n_poses=12)
