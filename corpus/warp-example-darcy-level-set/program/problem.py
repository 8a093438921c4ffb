import contextlib

import numpy as np
import warp as wp
import warp.examples.fem.utils as fem_example_utils
import warp.fem as fem

from warp.examples.fem.example_darcy_ls_optimization import (
    Example,
    combine_losses,
    diffusion_form,
    inflow_velocity,
    volume_form,
)


class Problem:
    def __init__(self, device, resolution, degree):
        with wp.ScopedDevice(device):
            self.example = Example(quiet=True, degree=degree, resolution=resolution)
        self.device = device
        self.v = self.example._level_set_velocity_field.dof_values
        self.level_set = self.example._level_set_field.dof_values
        self.params = {"level_set": self.level_set}

    def _run(self, tape):
        ex = self.example
        rec = tape if tape is not None else contextlib.nullcontext()
        p = ex._p_field.dof_values
        p.zero_()

        advected_level_set = fem.make_discrete_field(space=ex._ls_space)
        advected_level_set.dof_values.assign(ex._level_set_field.dof_values)
        advected_level_set.dof_values.requires_grad = True
        advected_level_set_restriction = fem.make_restriction(advected_level_set, domain=ex._p_test.domain)

        p_rhs = wp.empty(ex._p_space.node_count(), dtype=float, requires_grad=True)

        with rec:
            ex.advect_level_set(
                level_set_in=ex._level_set_field,
                level_set_out=advected_level_set_restriction,
                velocity=ex._level_set_velocity_field,
                dt=1.0,
            )
            fem.integrate(
                diffusion_form,
                fields={"level_set": advected_level_set, "p": ex._p_field, "q": ex._p_test},
                values={"smoothing": ex._smoothing, "simp": ex._simp, "k_min": ex._k_min, "scale": -1.0},
                output=p_rhs,
            )

        p_matrix = fem.integrate(
            diffusion_form,
            fields={"level_set": advected_level_set, "p": ex._p_trial, "q": ex._p_test},
            values={"smoothing": ex._smoothing, "simp": ex._simp, "k_min": ex._k_min, "scale": 1.0},
            output_dtype=float,
        )
        fem.project_linear_system(p_matrix, p_rhs, ex._bd_projector, ex._bd_prescribed_value, normalize_projector=False)
        fem_example_utils.bsr_cg(p_matrix, b=p_rhs, x=p, quiet=True, tol=1e-6, max_iters=1000)

        if tape is not None:

            def solve_linear_system():
                fem_example_utils.bsr_cg(p_matrix, b=p.grad, x=p_rhs.grad, quiet=True, tol=1e-6, max_iters=1000)
                p_rhs.grad -= ex._bd_projector @ p_rhs.grad

            tape.record_func(solve_linear_system, arrays=(p_rhs, p))

        loss = wp.empty(shape=1, dtype=float, requires_grad=True)
        vol = wp.empty(shape=1, dtype=float, requires_grad=True)
        with rec:
            fem.integrate(
                inflow_velocity,
                fields={"level_set": advected_level_set.trace(), "p": ex._p_field.trace()},
                values={"smoothing": ex._smoothing, "simp": ex._simp, "k_min": ex._k_min},
                domain=ex._inflow,
                output=loss,
            )
            fem.integrate(
                volume_form,
                fields={"level_set": advected_level_set},
                values={"smoothing": ex._smoothing},
                domain=ex._p_test.domain,
                output=vol,
            )
            wp.launch(combine_losses, dim=1, inputs=(loss, vol, ex._target_vol, 1000.0))
        return loss

    def objective(self):
        with wp.ScopedDevice(self.device):
            return float(self._run(None).numpy()[0])

    def gradient(self):
        with wp.ScopedDevice(self.device):
            tape = wp.Tape()
            loss = self._run(tape)
            tape.backward(loss=loss)
            g = self.level_set.grad.numpy().copy()
            tape.zero()
        return {"level_set": g}

    def train(self, iterations):
        with wp.ScopedDevice(self.device):
            return [self.example.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, 25, 2)
    return Problem(device, 3, 2)
