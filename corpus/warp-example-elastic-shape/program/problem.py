import contextlib

import warp as wp
import warp.examples.fem.utils as fem_example_utils
import warp.fem as fem

from warp.examples.fem.example_elastic_shape_optimization import (
    Example,
    add_volume_loss,
    hooke_elasticity_form,
    invert_scalar,
    loss_form,
    normalized_load_form,
    volume_form,
)


class Problem:
    def __init__(self, device, resolution, degree):
        self.device = device
        with wp.ScopedDevice(device):
            self.example = Example(quiet=True, degree=degree, resolution=resolution)
        self.x = self.example._vertex_positions
        self.params = {"x": self.x}

    def _run(self, tape):
        ex = self.example
        rec = tape if tape is not None else contextlib.nullcontext()
        u = ex._u_field.dof_values
        u.zero_()
        u_rhs = wp.empty(ex._u_space.node_count(), dtype=wp.vec2f, requires_grad=True)
        with rec:
            bottom_length = wp.empty(shape=1, dtype=float, requires_grad=True)
            inv_bottom_length = wp.empty(shape=1, dtype=float, requires_grad=True)
            fem.integrate(volume_form, domain=ex._u_bottom_test.domain, output=bottom_length)
            wp.launch(invert_scalar, dim=1, inputs=[bottom_length, inv_bottom_length])
            fem.integrate(
                normalized_load_form,
                fields={"v": ex._u_bottom_test},
                values={"load": ex._load, "inv_length": inv_bottom_length},
                output=u_rhs,
            )
            fem.integrate(
                hooke_elasticity_form,
                fields={"u": ex._u_field, "v": ex._u_test},
                values={"lame": -ex._lame},
                output=u_rhs,
                add=True,
            )
        u_matrix = fem.integrate(
            hooke_elasticity_form,
            fields={"u": ex._u_trial, "v": ex._u_test},
            values={"lame": ex._lame},
            output_dtype=float,
        )
        fem.project_linear_system(u_matrix, u_rhs, ex._bd_projector, normalize_projector=False)
        fem_example_utils.bsr_cg(u_matrix, b=u_rhs, x=u, quiet=True, tol=1e-8, max_iters=1000)

        if tape is not None:

            def solve_linear_system():
                fem_example_utils.bsr_cg(u_matrix, b=u.grad, x=u_rhs.grad, quiet=True, tol=1e-8, max_iters=1000)
                u_rhs.grad -= ex._bd_projector @ u_rhs.grad
                ex._u_field.dof_values.grad.zero_()

            tape.record_func(solve_linear_system, arrays=(u_rhs, u))

        loss = wp.empty(shape=1, dtype=float, requires_grad=True)
        vol = wp.empty(shape=1, dtype=float, requires_grad=True)
        with rec:
            fem.integrate(
                loss_form,
                fields={"u": ex._u_field},
                values={"lame": ex._lame, "quality_weight": 50.0},
                domain=ex._u_test.domain,
                output=loss,
            )
            fem.integrate(volume_form, domain=ex._u_test.domain, output=vol)
            wp.launch(add_volume_loss, dim=1, inputs=(loss, vol, ex._initial_volume, 1000.0))
        return loss

    def objective(self):
        with wp.ScopedDevice(self.device):
            return float(self._run(None).numpy()[0])

    def gradient(self):
        with wp.ScopedDevice(self.device):
            tape = wp.Tape()
            loss = self._run(tape)
            tape.backward(loss=loss)
            g = self.x.grad.numpy().copy()
            tape.zero()
        return {"x": g}

    def train(self, iterations):
        with wp.ScopedDevice(self.device):
            return [self.example.step() for _ in range(iterations)]


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, 25, 2)
    return Problem(device, 5, 2)
