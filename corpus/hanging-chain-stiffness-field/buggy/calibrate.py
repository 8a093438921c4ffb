import argparse

import numpy as np
import warp as wp


@wp.kernel
def material_field(theta: wp.array(dtype=wp.float64), k0: wp.float64, k: wp.array(dtype=wp.float64)):
    i = wp.tid()
    k[i] = k0 * wp.exp(theta[i])


@wp.kernel
def relax_step(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    k: wp.array(dtype=wp.float64),
    rest: wp.float64,
    grav: wp.float64,
    damp: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    n = x.shape[0]
    above = wp.float64(0.0)
    if i > 0:
        above = x[i - 1]
    f = -k[i] * (x[i] - above - rest) + grav
    if i < n - 1:
        f += k[i + 1] * (x[i + 1] - x[i] - rest)
    vn = v[i] + dt * (f - damp * v[i])
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def sag_error(x: wp.array(dtype=wp.float64), seen: wp.array(dtype=wp.float64), err: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - seen[i]
    wp.atomic_add(err, 0, d * d)


@wp.kernel
def adjust(theta: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    theta[i] = theta[i] - lr * g[i]


class ChainCalibrator:
    def __init__(self, masses, steps, seen, lr):
        self.n = masses
        self.steps = steps
        self.seen = wp.array(seen, dtype=wp.float64)
        self.lr = wp.float64(lr)
        self.theta = wp.zeros(masses, dtype=wp.float64, requires_grad=True)
        self.k = wp.zeros(masses, dtype=wp.float64, requires_grad=True)
        self.x0 = wp.array(np.arange(1, masses + 1, dtype=np.float64), dtype=wp.float64)

    def update_material(self):
        wp.launch(material_field, dim=self.n, inputs=[self.theta, wp.float64(10.0)], outputs=[self.k])

    def forward(self):
        xs = [wp.clone(self.x0, requires_grad=True)] + [wp.zeros(self.n, dtype=wp.float64, requires_grad=True)
                                                        for _ in range(self.steps)]
        vs = [wp.zeros(self.n, dtype=wp.float64, requires_grad=True) for _ in range(self.steps + 1)]
        for s in range(self.steps):
            wp.launch(relax_step, dim=self.n,
                      inputs=[xs[s], vs[s], self.k, wp.float64(1.0), wp.float64(1.0), wp.float64(1.5), wp.float64(0.05)],
                      outputs=[xs[s + 1], vs[s + 1]])
        err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(sag_error, dim=self.n, inputs=[xs[-1], self.seen], outputs=[err])
        return err

    def step(self):
        self.update_material()
        tape = wp.Tape()
        with tape:
            err = self.forward()
        tape.backward(err)
        wp.launch(adjust, dim=self.n, inputs=[self.theta, self.theta.grad, self.lr])
        tape.zero()
        return err.numpy()[0]


def main():
    parser = argparse.ArgumentParser(description="calibrate the segment stiffness of a hanging chain from its sag")
    parser.add_argument("--masses", type=int, default=6)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args()

    seen = np.arange(1, args.masses + 1) * 1.0 + np.linspace(0.35, 0.9, args.masses)
    cal = ChainCalibrator(args.masses, args.steps, seen, args.lr)
    for it in range(args.iters):
        e = cal.step()
        if it % 10 == 0:
            print(f"iteration {it}: sag error {e:.5e}")
    print("log-stiffness", cal.theta.numpy())


if __name__ == "__main__":
    main()
