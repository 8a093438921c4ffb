import numpy as np
import warp as wp

import energy


class ChannelCalibration:
    def __init__(self, device, channels):
        rng = np.random.default_rng(3)
        self.device = device
        self.channels = channels
        self.gain = wp.array(rng.uniform(0.6, 1.4, size=(channels, energy.SAMPLES)), dtype=wp.float64,
                             requires_grad=True, device=device)
        self.target = wp.array(rng.uniform(4.0, 10.0, size=channels), dtype=wp.float64, device=device)
        self.params = {"gain": self.gain}

    def run(self):
        e = wp.zeros(self.channels, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch_tiled(energy.channel_energy, dim=[self.channels], inputs=[self.gain], outputs=[e],
                        block_dim=energy.SAMPLES, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(energy.misfit, dim=self.channels, inputs=[e, self.target], outputs=[loss], device=self.device)
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

    def train(self, iterations):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["gain"]
            self.gain.assign(self.gain.numpy() - 0.01 * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return ChannelCalibration(device, channels=256)
    return ChannelCalibration(device, channels=4)
