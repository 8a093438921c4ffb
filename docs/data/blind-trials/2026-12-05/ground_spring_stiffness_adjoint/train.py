"""Identify the foundation stiffness under ten sleepers of a track from static deflection readings.

Each outer iteration solves the static equilibrium by gradient descent on the elastic energy (one
small tape per step), solves the adjoint system the same way, and differentiates the Lagrangian
with respect to the foundation stiffness.
"""
import numpy as np
import warp as wp

wp.init()

N = 10
COUPLING = 0.5
INNER_STEPS = 150
INNER_RATE = 0.2
OUTER_LR = 2.0


@wp.kernel
def elastic_energy(u: wp.array(dtype=wp.float64), kg: wp.array(dtype=wp.float64), load: wp.array(dtype=wp.float64),
                   coupling: wp.float64, energy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    e = wp.float64(0.5) * kg[i] * u[i] * u[i] - load[i] * u[i]
    if i < u.shape[0] - 1:
        d = u[i + 1] - u[i]
        e = e + wp.float64(0.5) * coupling * d * d
    wp.atomic_add(energy, 0, e)


@wp.kernel
def relax(u: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), rate: wp.float64):
    i = wp.tid()
    u[i] = u[i] - rate * g[i]


@wp.kernel
def misfit_gradient(u: wp.array(dtype=wp.float64), measured: wp.array(dtype=wp.float64),
                    out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.float64(2.0) * (u[i] - measured[i]) / wp.float64(u.shape[0])


@wp.kernel
def lagrangian(kg: wp.array(dtype=wp.float64), u: wp.array(dtype=wp.float64), lam: wp.array(dtype=wp.float64),
               load: wp.array(dtype=wp.float64), measured: wp.array(dtype=wp.float64), coupling: wp.float64,
               misfit: wp.array(dtype=wp.float64), value: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = u.shape[0]
    r = kg[i] * u[i] - load[i]
    if i > 0:
        r = r + coupling * (u[i] - u[i - 1])
    if i < n - 1:
        r = r + coupling * (u[i] - u[i + 1])
    d = u[i] - measured[i]
    m = d * d / wp.float64(n)
    wp.atomic_add(misfit, 0, m)
    wp.atomic_add(value, 0, m - lam[i] * r)


@wp.kernel
def stiffness_step(kg: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    kg[i] = wp.max(kg[i] - lr * g[i], wp.float64(0.3))


def solve_equilibrium(kg, rhs):
    u = wp.zeros(N, dtype=wp.float64, requires_grad=True)
    energy = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    for _ in range(INNER_STEPS):
        energy.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(elastic_energy, dim=N, inputs=[u, kg, rhs, wp.float64(COUPLING)], outputs=[energy])
        tape.backward(energy)
        wp.launch(relax, dim=N, inputs=[u, u.grad, wp.float64(INNER_RATE)])
        tape.zero()
    return u


def main():
    rng = np.random.default_rng(11)
    kg_true = rng.uniform(1.0, 2.5, N)
    load_np = rng.uniform(0.5, 1.5, N)
    stiff = np.diag(kg_true + 2 * COUPLING) - COUPLING * (np.eye(N, k=1) + np.eye(N, k=-1))
    stiff[0, 0] -= COUPLING
    stiff[-1, -1] -= COUPLING
    measured_np = np.linalg.solve(stiff, load_np)

    load = wp.array(load_np, dtype=wp.float64)
    measured = wp.array(measured_np, dtype=wp.float64)
    kg = wp.array(np.full(N, 1.6), dtype=wp.float64, requires_grad=True)
    dmis = wp.zeros(N, dtype=wp.float64)
    misfit = wp.zeros(1, dtype=wp.float64)
    value = wp.zeros(1, dtype=wp.float64, requires_grad=True)

    for it in range(15):
        u = solve_equilibrium(kg, load)
        wp.launch(misfit_gradient, dim=N, inputs=[u, measured], outputs=[dmis])
        lam = solve_equilibrium(kg, dmis)
        misfit.zero_()
        value.zero_()
        outer = wp.Tape()
        with outer:
            wp.launch(lagrangian, dim=N, inputs=[kg, u, lam, load, measured, wp.float64(COUPLING)],
                      outputs=[misfit, value])
        outer.backward(value)
        wp.launch(stiffness_step, dim=N, inputs=[kg, kg.grad, wp.float64(OUTER_LR)])
        outer.zero()
        print(f"iter {it:3d}  misfit {misfit.numpy()[0]:.10e}")
    print("foundation stiffness", np.round(kg.numpy(), 3))
    print("true               ", np.round(kg_true, 3))


if __name__ == "__main__":
    main()
