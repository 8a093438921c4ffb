import numpy as np
import warp as wp

import flow


class TracerRelease:
    def __init__(self, device, n, steps):
        rng = np.random.default_rng(8)
        self.device = device
        self.n = n
        self.steps = steps
        self.seed = 1234
        self.mean_wind = wp.vec3(0.6, 0.0, 0.1)
        self.amp = 0.8
        self.freq = 1.3
        self.dt = 0.1
        self.release = wp.array(rng.uniform(-0.5, 0.5, size=(n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True, device=device)
        self.target = wp.array(rng.uniform(-0.3, 0.7, size=(n, 3)).astype(np.float32), dtype=wp.vec3, device=device)
        self.params = {"release": self.release}

    def run(self):
        states = [self.release]
        for _ in range(self.steps):
            nxt = wp.zeros(self.n, dtype=wp.vec3, requires_grad=True, device=self.device)
            wp.launch(
                flow.advect,
                dim=self.n,
                inputs=[states[-1], wp.uint32(self.seed), self.mean_wind, self.amp, self.freq, self.dt],
                outputs=[nxt],
                device=self.device,
            )
            states.append(nxt)
        loss = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        wp.launch(flow.landing_misfit, dim=self.n, inputs=[states[-1], self.target, 1.0 / self.n], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        g = self.release.grad.numpy().copy()
        tape.zero()
        return {"release": g}


def make_problem(device, scale="small"):
    if scale == "production":
        return TracerRelease(device, n=256, steps=40)
    return TracerRelease(device, n=6, steps=4)
