import numpy as np
import warp as wp

from kernels import diffuse, sensor_misfit


class HeatSolver:
    def __init__(self, shape, steps, dt=0.15, k0=1.0, beta=0.5, device=None):
        self.shape = shape
        self.steps = steps
        self.dt = dt
        self.k0 = k0
        self.beta = beta
        self.device = device
        self.t = 0
        self.frames = [self._field() for _ in range(self.steps + 1)]

    def _field(self):
        return wp.zeros(self.shape, dtype=float, device=self.device, requires_grad=True)

    def frame(self, t):
        return self.frames[t % len(self.frames)]

    def reset(self, initial):
        self.t = 0
        self.frame(0).assign(initial)

    def advance(self, power):
        src = self.frame(self.t)
        dst = self.frame(self.t + 1)
        wp.launch(diffuse, dim=self.shape, inputs=[src, power, self.k0, self.beta, self.dt], outputs=[dst],
                  device=self.device)
        self.t += 1
        return dst

    def run(self, initial, power):
        self.reset(initial)
        out = self.frame(0)
        for _ in range(self.steps):
            out = self.advance(power)
        return out


class SensorArray:
    def __init__(self, rows, cols, readings, device=None):
        self.rows = wp.array(np.asarray(rows, dtype=np.int32), dtype=int, device=device)
        self.cols = wp.array(np.asarray(cols, dtype=np.int32), dtype=int, device=device)
        self.readings = wp.array(np.asarray(readings, dtype=np.float32), dtype=float, device=device)
        self.device = device

    def misfit(self, temp):
        loss = wp.zeros(1, dtype=float, device=self.device, requires_grad=True)
        n = self.rows.shape[0]
        wp.launch(sensor_misfit, dim=n, inputs=[temp, self.rows, self.cols, self.readings, 1.0 / n], outputs=[loss],
                  device=self.device)
        return loss
