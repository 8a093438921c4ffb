# SPDX-License-Identifier: Apache-2.0
# xpbd.py is adapted from newton-physics/newton newton/_src/solvers/xpbd/kernels.py,
# newton/_src/solvers/xpbd/solver_xpbd.py and newton/_src/solvers/solver.py
# (Copyright 2025 The Newton Developers, Apache License 2.0).

import numpy as np
import warp as wp

import xpbd


class Model:
    def __init__(self, device):
        self.device = device
        self.particle_count = 4
        self.spring_count = 3
        self.particle_inv_mass = wp.array([0.0, 1.0, 2.0, 1.0], dtype=float, device=device)
        self.particle_flags = wp.array([1, 1, 1, 1], dtype=wp.int32, device=device)
        self.particle_world = wp.array([0, 0, 0, 0], dtype=wp.int32, device=device)
        self.particle_max_velocity = 1.0e5
        self.gravity = wp.zeros(1, dtype=wp.vec3, device=device)
        self.spring_indices = wp.array([0, 1, 1, 2, 2, 3], dtype=int, device=device)
        self.spring_rest_length = wp.array([1.0, 1.0, 1.0], dtype=float, device=device, requires_grad=True)
        self.spring_stiffness = wp.array([40.0, 100.0, 60.0], dtype=float, device=device, requires_grad=True)
        self.spring_damping = wp.array([0.0, 0.0, 0.0], dtype=float, device=device, requires_grad=True)


class State:
    def __init__(self, model, requires_grad):
        dev = model.device
        self.requires_grad = requires_grad
        self.particle_q = wp.zeros(model.particle_count, dtype=wp.vec3, device=dev, requires_grad=requires_grad)
        self.particle_qd = wp.zeros(model.particle_count, dtype=wp.vec3, device=dev, requires_grad=requires_grad)
        self.particle_f = wp.zeros(model.particle_count, dtype=wp.vec3, device=dev, requires_grad=requires_grad)


class SpringStretch:
    def __init__(self, device):
        self.device = device
        self.model = Model(device)
        self.params = {"spring_stiffness": self.model.spring_stiffness}
        self.solver = xpbd.SolverXPBD(self.model, iterations=4)
        self.seed = wp.array([(0.0, 0.0, 0.0), (1.0, 0.5, 0.0), (0.5, -1.0, 0.0), (1.0, 1.0, 0.0)], dtype=wp.vec3, device=device)

    def _states(self, requires_grad):
        state_in = State(self.model, requires_grad)
        state_out = State(self.model, requires_grad)
        state_in.particle_q.assign(np.array([(0.0, 0.0, 0.0), (1.4, 0.3, 0.0), (2.9, 0.1, 0.0), (4.2, -0.4, 0.0)], dtype=np.float32))
        return state_in, state_out

    def objective(self):
        state_in, state_out = self._states(False)
        self.solver.step(state_in, state_out, dt=0.1)
        return float(np.dot(state_out.particle_q.numpy().reshape(-1), self.seed.numpy().reshape(-1)))

    def gradient(self):
        k = self.params["spring_stiffness"]
        k.grad.zero_()
        state_in, state_out = self._states(True)
        with wp.Tape() as tape:
            self.solver.step(state_in, state_out, dt=0.1)
        tape.backward(grads={state_out.particle_q: self.seed})
        return {"spring_stiffness": k.grad.numpy().copy()}


def make_problem(device, scale="small"):
    return SpringStretch(device)
