import numpy as np
import warp as wp

import chain


def new_state(n, device, x0=None):
    s = chain.ChainState()
    if x0 is None:
        s.x = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=device)
    else:
        s.x = wp.array(x0, dtype=wp.float64, requires_grad=True, device=device)
    s.v = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=device)
    return s


class MooringLine:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.stiffness = 40.0
        self.gravity = -9.81
        self.dt = 0.02
        self.x0 = np.cumsum(np.full(n, 1.0))
        self.target = wp.array(self.x0 + 0.05 * np.sin(np.arange(n)), dtype=wp.float64, device=device)
        self.rest = wp.array(np.full(n, 1.0) + 0.02 * np.cos(np.arange(n)), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"rest": self.rest}

    def run(self):
        state = new_state(self.n, self.device, self.x0)
        for _ in range(self.steps):
            force = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(chain.segment_forces, dim=self.n, inputs=[state, self.rest, wp.float64(self.stiffness)], outputs=[force], device=self.device)
            state_next = new_state(self.n, self.device)
            wp.launch(
                chain.integrate,
                dim=self.n,
                inputs=[state, force, wp.float64(self.gravity), wp.float64(self.dt)],
                outputs=[state_next],
                device=self.device,
            )
            state = state_next
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(chain.depth_misfit, dim=self.n, inputs=[state, self.target], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        g = self.rest.grad.numpy().copy()
        tape.zero()
        return {"rest": g}


def make_problem(device, scale="small"):
    if scale == "production":
        return MooringLine(device, n=64, steps=200)
    return MooringLine(device, n=6, steps=16)
