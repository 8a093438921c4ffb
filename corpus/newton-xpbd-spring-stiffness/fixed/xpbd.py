# SPDX-FileCopyrightText: Copyright (c) 2025 The Newton Developers
# SPDX-License-Identifier: Apache-2.0

import warp as wp

PARTICLE_ACTIVE = wp.constant(1 << 0)


@wp.kernel
def integrate_particles(
    x: wp.array[wp.vec3],
    v: wp.array[wp.vec3],
    f: wp.array[wp.vec3],
    w: wp.array[float],
    particle_flags: wp.array[wp.int32],
    particle_world: wp.array[wp.int32],
    gravity: wp.array[wp.vec3],
    dt: float,
    v_max: float,
    x_new: wp.array[wp.vec3],
    v_new: wp.array[wp.vec3],
):
    tid = wp.tid()
    x0 = x[tid]

    if (particle_flags[tid] & PARTICLE_ACTIVE) == 0:
        x_new[tid] = x0
        return

    v0 = v[tid]
    f0 = f[tid]

    inv_mass = w[tid]
    world_idx = particle_world[tid]
    world_g = gravity[wp.max(world_idx, 0)]

    # simple semi-implicit Euler. v1 = v0 + a dt, x1 = x0 + v1 dt
    v1 = v0 + (f0 * inv_mass + world_g * wp.step(-inv_mass)) * dt
    # enforce velocity limit to prevent instability
    v1_mag = wp.length(v1)
    if v1_mag > v_max:
        v1 *= v_max / v1_mag
    x1 = x0 + v1 * dt

    x_new[tid] = x1
    v_new[tid] = v1


@wp.kernel
def solve_springs(
    x: wp.array[wp.vec3],
    v: wp.array[wp.vec3],
    invmass: wp.array[float],
    spring_indices: wp.array[int],
    spring_rest_lengths: wp.array[float],
    spring_stiffness: wp.array[float],
    spring_damping: wp.array[float],
    dt: float,
    lambda_in: wp.array[float],
    lambda_out: wp.array[float],
    delta: wp.array[wp.vec3],
):
    tid = wp.tid()
    lambda_out[tid] = lambda_in[tid]

    i = spring_indices[tid * 2 + 0]
    j = spring_indices[tid * 2 + 1]

    ke = spring_stiffness[tid]
    kd = spring_damping[tid]
    rest = spring_rest_lengths[tid]

    xi = x[i]
    xj = x[j]

    vi = v[i]
    vj = v[j]

    xij = xi - xj
    vij = vi - vj

    l = wp.length(xij)

    if l == 0.0:
        return

    n = xij / l

    c = l - rest
    grad_c_xi = n
    grad_c_xj = -1.0 * n

    wi = invmass[i]
    wj = invmass[j]

    denom = wi + wj

    # Note strict inequality for damping -- 0 damping is ok
    if denom <= 0.0 or ke <= 0.0 or kd < 0.0:
        return

    alpha = 1.0 / (ke * dt * dt)
    gamma = kd / (ke * dt)

    grad_c_dot_v = dt * wp.dot(grad_c_xi, vij)  # Note: dt because from the paper we want x_i - x^n, not v...
    lambda_prev = lambda_in[tid]
    dlambda = -1.0 * (c + alpha * lambda_prev + gamma * grad_c_dot_v) / ((1.0 + gamma) * denom + alpha)

    dxi = wi * dlambda * grad_c_xi
    dxj = wj * dlambda * grad_c_xj

    lambda_out[tid] = lambda_prev + dlambda

    wp.atomic_add(delta, i, dxi)
    wp.atomic_add(delta, j, dxj)


@wp.kernel
def apply_particle_deltas(
    x_orig: wp.array[wp.vec3],
    x_pred: wp.array[wp.vec3],
    particle_flags: wp.array[wp.int32],
    delta: wp.array[wp.vec3],
    dt: float,
    v_max: float,
    x_out: wp.array[wp.vec3],
    v_out: wp.array[wp.vec3],
):
    tid = wp.tid()
    if (particle_flags[tid] & PARTICLE_ACTIVE) == 0:
        return

    x0 = x_orig[tid]
    xp = x_pred[tid]

    # constraint deltas
    d = delta[tid]

    x_new = xp + d
    v_new = (x_new - x0) / dt

    # enforce velocity limit to prevent instability
    v_new_mag = wp.length(v_new)
    if v_new_mag > v_max:
        v_new *= v_max / v_new_mag
        x_new = x0 + v_new * dt

    x_out[tid] = x_new
    v_out[tid] = v_new


class SolverXPBD:
    def __init__(self, model, iterations=2):
        self.model = model
        self.iterations = iterations

    def _apply_particle_deltas(self, model, state_in, state_out, particle_deltas, dt):
        particle_q = state_out.particle_q
        new_particle_q = wp.empty_like(state_out.particle_q)
        new_particle_qd = wp.empty_like(state_out.particle_qd)

        wp.launch(
            kernel=apply_particle_deltas,
            dim=model.particle_count,
            inputs=[
                self.particle_q_init,
                particle_q,
                model.particle_flags,
                particle_deltas,
                dt,
                model.particle_max_velocity,
            ],
            outputs=[new_particle_q, new_particle_qd],
            device=model.device,
        )

        state_out.particle_q = new_particle_q
        state_out.particle_qd = new_particle_qd

        return new_particle_q, new_particle_qd

    def step(self, state_in, state_out, dt):
        model = self.model
        requires_grad = state_in.requires_grad

        particle_q = state_out.particle_q
        particle_qd = state_out.particle_qd

        self.particle_q_init = wp.clone(state_in.particle_q)
        particle_deltas = wp.empty_like(state_out.particle_qd)

        wp.launch(
            kernel=integrate_particles,
            dim=model.particle_count,
            inputs=[
                state_in.particle_q,
                state_in.particle_qd,
                state_in.particle_f,
                model.particle_inv_mass,
                model.particle_flags,
                model.particle_world,
                model.gravity,
                dt,
                model.particle_max_velocity,
            ],
            outputs=[state_out.particle_q, state_out.particle_qd],
            device=model.device,
        )

        spring_constraint_lambdas = None
        spring_constraint_lambdas_next = None
        if model.spring_count:
            spring_constraint_lambdas = wp.zeros_like(model.spring_rest_length, requires_grad=requires_grad)
            spring_constraint_lambdas_next = wp.zeros_like(model.spring_rest_length, requires_grad=requires_grad)

        for i in range(self.iterations):
            if requires_grad and i > 0:
                particle_deltas = wp.zeros_like(particle_deltas)
            else:
                particle_deltas.zero_()

            # distance constraints
            if model.spring_count:
                wp.launch(
                    kernel=solve_springs,
                    dim=model.spring_count,
                    inputs=[
                        particle_q,
                        particle_qd,
                        model.particle_inv_mass,
                        model.spring_indices,
                        model.spring_rest_length,
                        model.spring_stiffness,
                        model.spring_damping,
                        dt,
                        spring_constraint_lambdas,
                    ],
                    outputs=[spring_constraint_lambdas_next, particle_deltas],
                    device=model.device,
                )
                previous_lambdas = spring_constraint_lambdas
                spring_constraint_lambdas = spring_constraint_lambdas_next
                if requires_grad and i + 1 < self.iterations:
                    spring_constraint_lambdas_next = wp.zeros_like(
                        spring_constraint_lambdas, requires_grad=True
                    )
                else:
                    spring_constraint_lambdas_next = previous_lambdas

            particle_q, particle_qd = self._apply_particle_deltas(model, state_in, state_out, particle_deltas, dt)

        return state_out
