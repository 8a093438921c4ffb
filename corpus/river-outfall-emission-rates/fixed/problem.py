import math

import numpy as np
import warp as wp


@wp.kernel
def transport(
    c: wp.array(dtype=wp.float64),
    emission: wp.array(dtype=wp.float64),
    velocity: wp.array(dtype=wp.float64),
    diffusivity: wp.float64,
    decay: wp.float64,
    dx: wp.float64,
    dt: wp.float64,
    c_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = c.shape[0]
    left = c[wp.max(i - 1, 0)]
    right = c[wp.min(i + 1, n - 1)]
    mid = c[i]
    adv = -velocity[i] * (mid - left) / dx
    dif = diffusivity * (left - wp.float64(2.0) * mid + right) / (dx * dx)
    c_out[i] = mid + dt * (adv + dif - decay * mid * mid + emission[i])


@wp.kernel
def station_misfit(
    c: wp.array(dtype=wp.float64),
    stations: wp.array(dtype=wp.int32),
    observed: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    d = c[stations[k]] - observed[k]
    wp.atomic_add(loss, 0, d * d)


class RiverReach:
    def __init__(self, device, cells, steps, flow):
        self.device = device
        self.n = cells
        self.steps = steps
        self.length = 12.0
        self.dx = self.length / cells
        self.dt = 0.05
        self.diffusivity = 0.4
        self.decay = 0.05
        x = (np.arange(cells) + 0.5) * self.dx
        u = flow * (1.0 + 0.3 * np.sin(2.0 * np.pi * x / self.length))
        self.velocity = wp.array(u, dtype=wp.float64, device=device)
        limit = min(0.8 * self.dx / np.max(u), 0.4 * self.dx * self.dx / self.diffusivity)
        self.substeps = max(1, int(math.ceil(self.dt / limit)))
        self.c0 = np.full(cells, 0.1)
        idx = np.linspace(1, cells - 2, min(cells, 8)).astype(np.int32)
        self.stations = wp.array(idx, dtype=wp.int32, device=device)
        self.observed = wp.array(0.5 + 0.4 * np.cos(x[idx]), dtype=wp.float64, device=device)
        e = 0.2 + 0.1 * np.exp(-((x - 3.0) ** 2))
        self.emission = wp.array(e, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"emission": self.emission}

    def _launch(self, c, h, out):
        wp.launch(
            transport,
            dim=self.n,
            inputs=[
                c,
                self.emission,
                self.velocity,
                wp.float64(self.diffusivity),
                wp.float64(self.decay),
                wp.float64(self.dx),
                wp.float64(h),
            ],
            outputs=[out],
            device=self.device,
        )

    def advance(self, c):
        out = wp.zeros(self.n, dtype=wp.float64, requires_grad=True, device=self.device)
        if self.substeps == 1:
            self._launch(c, self.dt, out)
            return out
        h = self.dt / self.substeps
        cur = c
        for _ in range(self.substeps - 1):
            nxt = wp.empty_like(self.velocity, requires_grad=True)
            self._launch(cur, h, nxt)
            cur = nxt
        self._launch(cur, h, out)
        return out

    def forward(self):
        c = wp.array(self.c0, dtype=wp.float64, requires_grad=True, device=self.device)
        for _ in range(self.steps):
            c = self.advance(c)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            station_misfit,
            dim=self.stations.shape[0],
            inputs=[c, self.stations, self.observed],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        out = {"emission": self.emission.grad.numpy().copy()}
        tape.zero()
        return out


def make_problem(device, scale="small"):
    if scale == "production":
        return RiverReach(device, cells=48, steps=40, flow=4.0)
    return RiverReach(device, cells=12, steps=30, flow=1.0)
