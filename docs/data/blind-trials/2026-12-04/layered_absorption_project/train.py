"""Fit per-layer absorption coefficients of a slab from transmitted intensities at several angles."""
import numpy as np
import warp as wp
import warp.optim

from optics import keep_positive, log_misfit, optical_depth, transmitted

LAYERS = 8
DETECTORS = 12
DZ = 0.1
I0 = 2.0


def geometry():
    ang = np.linspace(0.0, 1.1, DETECTORS)
    rng = np.random.default_rng(7)
    path = DZ / np.cos(ang)[:, None] * rng.uniform(0.6, 1.4, (DETECTORS, LAYERS))
    return path


MU_TRUE = np.array([0.5, 1.2, 2.0, 0.8, 0.3, 1.6, 2.4, 1.0])


def main(iters=25):
    path_np = geometry()
    meas_np = I0 * np.exp(-(path_np @ MU_TRUE))
    path = wp.array(path_np, dtype=float)
    meas = wp.array(meas_np, dtype=float)
    mu = wp.array(np.full(LAYERS, 1.0), dtype=float, requires_grad=True)
    opt = warp.optim.Adam([mu], lr=0.08)
    depth = wp.zeros(1, dtype=float)
    for it in range(iters):
        wp.launch(keep_positive, dim=LAYERS, inputs=[mu, 1.0e-3])
        depth.zero_()
        wp.launch(optical_depth, dim=LAYERS, inputs=[mu, DZ], outputs=[depth])

        out = wp.zeros(DETECTORS, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(transmitted, dim=DETECTORS, inputs=[mu, path, I0], outputs=[out])
            wp.launch(log_misfit, dim=DETECTORS, inputs=[out, meas], outputs=[loss])
        tape.backward(loss)
        opt.step([mu.grad])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d} loss {loss.numpy()[0]:.6e} depth {depth.numpy()[0]:.3f}")
    print("mu", np.round(mu.numpy(), 3))


if __name__ == "__main__":
    main()
