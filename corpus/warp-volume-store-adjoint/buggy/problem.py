# SPDX-License-Identifier: Apache-2.0

import os

import numpy as np
import warp as wp

X0 = [0.5, 1.5, -1.0, 2.5]


@wp.kernel
def energy_and_density(volume: wp.uint64, x: wp.array(dtype=float), energy: wp.array(dtype=float)):
    i = wp.tid()
    density = x[i] * 2.0
    wp.volume_store_f(volume, i, 0, 0, density)
    energy[i] = x[i] * x[i]


def _load_volume(device):
    path = os.path.join(os.path.dirname(wp.__file__), "tests", "assets", "test_grid.nvdb")
    with open(path, "rb") as f:
        return wp.Volume.load_from_nvdb(f, device=device)


class Problem:
    def __init__(self, device):
        self.device = device
        self.volume = _load_volume(device)
        self.params = {"x": wp.array(np.array(X0, dtype=np.float32), dtype=float, requires_grad=True, device=device)}

    def objective(self):
        energy = wp.zeros(len(X0), dtype=float, device=self.device)
        wp.launch(energy_and_density, dim=len(X0), inputs=[self.volume.id, self.params["x"], energy],
                  device=self.device)
        return float(np.sum(energy.numpy().astype(np.float64)))

    def gradient(self):
        x = self.params["x"]
        x.grad.zero_()
        energy = wp.zeros(len(X0), dtype=float, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(energy_and_density, dim=len(X0), inputs=[self.volume.id, x, energy], device=self.device)
        tape.backward(grads={energy: wp.array(np.ones(len(X0), dtype=np.float32), device=self.device)})
        return {"x": x.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return Problem(device)
