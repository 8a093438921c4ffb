import argparse
import contextlib
import io

import numpy as np
import warp as wp

from warp.examples.fem.example_cantilever_topology_optimization import Example


class Problem:
    def __init__(self, device, nx, ny, nz):
        args = argparse.Namespace(device=device, nx=nx, ny=ny, nz=nz, max_evals=20, headless=True)
        with contextlib.redirect_stdout(io.StringIO()):
            self.example = Example(args)
            self.example.evaluate(self.example.initial_x)
        self.x = wp.array(self.example.initial_x, dtype=wp.float64, device=self.example.device, requires_grad=True)
        self.params = {"x": self.x}

    def _evaluate(self):
        with contextlib.redirect_stdout(io.StringIO()):
            return self.example.evaluate(self.x.numpy().copy())

    def objective(self):
        return float(self._evaluate()[0])

    def gradient(self):
        return {"x": np.array(self._evaluate()[1], dtype=np.float64)}


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, 32, 12, 1)
    return Problem(device, 8, 4, 1)
