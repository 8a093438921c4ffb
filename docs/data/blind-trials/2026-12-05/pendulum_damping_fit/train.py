"""Identify the viscous damping of six lab pendulums from recorded swing angles."""
import numpy as np
import warp as wp

wp.init()

N_PEND = 6
STEPS = 50
DT = 0.02
GRAV_OVER_LEN = 9.81 / 0.75
PRIOR_WEIGHT = 1.0e-3


@wp.kernel
def damping_from_log(log_c: wp.array(dtype=float), c: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = wp.exp(log_c[i])


@wp.kernel
def swing(theta: wp.array(dtype=float), omega: wp.array(dtype=float), c: wp.array(dtype=float),
          dt: float, g_over_l: float,
          theta_out: wp.array(dtype=float), omega_out: wp.array(dtype=float)):
    i = wp.tid()
    w = omega[i] + dt * (-g_over_l * wp.sin(theta[i]) - c[i] * omega[i])
    theta_out[i] = theta[i] + dt * w
    omega_out[i] = w


@wp.kernel
def angle_misfit(theta: wp.array(dtype=float), observed: wp.array(dtype=float), scale: float,
                 loss: wp.array(dtype=float)):
    i = wp.tid()
    d = theta[i] - observed[i]
    wp.atomic_add(loss, 0, scale * d * d)


@wp.kernel
def log_prior(log_c: wp.array(dtype=float), mean: float, weight: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = log_c[i] - mean
    wp.atomic_add(loss, 0, weight * d * d)


@wp.kernel
def gradient_step(x: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    i = wp.tid()
    x[i] = x[i] - lr * g[i]


def rollout(theta0, c, thetas, omegas):
    wp.copy(thetas[0], theta0)
    for t in range(STEPS):
        wp.launch(swing, dim=N_PEND, inputs=[thetas[t], omegas[t], c, DT, GRAV_OVER_LEN],
                  outputs=[thetas[t + 1], omegas[t + 1]])


def record_observations(theta0, c_true):
    th = theta0.numpy().astype(np.float64)
    om = np.zeros(N_PEND)
    obs = []
    for _ in range(STEPS):
        om = om + DT * (-GRAV_OVER_LEN * np.sin(th) - c_true * om)
        th = th + DT * om
        obs.append(th.copy())
    return [wp.array(o.astype(np.float32), dtype=float) for o in obs]


def main():
    theta0 = wp.array(np.linspace(0.3, 0.8, N_PEND).astype(np.float32), dtype=float)
    c_true = np.array([0.35, 0.5, 0.8, 0.6, 1.1, 0.45])
    observed = record_observations(theta0, c_true)

    log_c = wp.array(np.full(N_PEND, np.log(0.6), dtype=np.float32), dtype=float, requires_grad=True)
    c = wp.zeros(N_PEND, dtype=float, requires_grad=True)
    thetas = [wp.zeros(N_PEND, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    omegas = [wp.zeros(N_PEND, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    scale = 1.0 / (STEPS * N_PEND)

    for it in range(30):
        wp.launch(damping_from_log, dim=N_PEND, inputs=[log_c], outputs=[c])
        loss.zero_()
        tape = wp.Tape()
        with tape:
            rollout(theta0, c, thetas, omegas)
            for t in range(STEPS):
                wp.launch(angle_misfit, dim=N_PEND, inputs=[thetas[t + 1], observed[t], scale], outputs=[loss])
            wp.launch(log_prior, dim=N_PEND, inputs=[log_c, float(np.log(0.5)), PRIOR_WEIGHT], outputs=[loss])
        tape.backward(loss)
        wp.launch(gradient_step, dim=N_PEND, inputs=[log_c, log_c.grad, 0.5])
        tape.zero()
        if it % 5 == 0 or it == 29:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}  damping {np.exp(log_c.numpy())}")


if __name__ == "__main__":
    main()
