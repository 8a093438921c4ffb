import contextlib

import numpy as np
import warp as wp


@wp.kernel
def step_parts(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    plate: wp.array(dtype=wp.float64),
    stiffness: wp.array(dtype=wp.float64),
    reach: wp.float64,
    gravity: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    gap = x[i] - plate[i]
    force = stiffness[i] * wp.exp(-gap / reach)
    vn = v[i] + dt * (force - gravity)
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


class VibratingTable:
    def __init__(self, device, lanes, steps, dt=0.004):
        self.device = device
        self.lanes = lanes
        self.steps = steps
        self.dt = dt
        self.gravity = 9.81
        self.reach = 0.004
        self.amplitude = 0.003
        self.omega = 60.0
        self.phase = np.linspace(0.0, 2.0, lanes)
        self.plate = wp.zeros(lanes, dtype=wp.float64, device=device)

    def plate_height(self, t):
        return self.amplitude * np.sin(self.omega * self.dt * t + self.phase)

    def rollout(self, x0, v0, stiffness, tape=None):
        scope = tape if tape is not None else contextlib.nullcontext()
        x, v = x0, v0
        states = []
        for t in range(self.steps):
            self.plate.assign(self.plate_height(t))
            xn = wp.zeros(self.lanes, dtype=wp.float64, requires_grad=True, device=self.device)
            vn = wp.zeros(self.lanes, dtype=wp.float64, requires_grad=True, device=self.device)
            with scope:
                wp.launch(
                    step_parts,
                    dim=self.lanes,
                    inputs=[x, v, self.plate, stiffness, wp.float64(self.reach), wp.float64(self.gravity), wp.float64(self.dt)],
                    outputs=[xn, vn],
                    device=self.device,
                )
            x, v = xn, vn
            states.append(x)
        return states
