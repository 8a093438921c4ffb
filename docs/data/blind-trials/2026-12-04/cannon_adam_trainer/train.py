"""Aim a battery of cannons (launch velocity per shell) at targets, with air drag, using Adam."""
import numpy as np
import warp as wp
import warp.optim

N = 5
STEPS = 60
DT = 0.02


@wp.kernel
def flight(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2), drag: float, dt: float,
           x_out: wp.array(dtype=wp.vec2), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    vi = v[i]
    a = wp.vec2(0.0, -9.81) - drag * wp.length(vi) * vi
    vn = vi + dt * a
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def to_vec(flat: wp.array(dtype=float), v: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    v[i] = wp.vec2(flat[2 * i], flat[2 * i + 1])


@wp.kernel
def miss_distance(x: wp.array(dtype=wp.vec2), target: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, 0.5 * wp.dot(d, d))


class Aimer:
    def __init__(self, targets, drag=0.05, lr=0.3):
        self.targets = wp.array(targets, dtype=wp.vec2)
        self.drag = drag
        self.v0 = wp.array(np.tile([5.0, 6.0], N), dtype=float, requires_grad=True)
        self.v_start = wp.zeros(N, dtype=wp.vec2, requires_grad=True)
        self.xs = [wp.zeros(N, dtype=wp.vec2, requires_grad=True) for _ in range(STEPS + 1)]
        self.vs = [wp.zeros(N, dtype=wp.vec2, requires_grad=True) for _ in range(STEPS)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)
        self.tape = wp.Tape()
        self.opt = warp.optim.Adam([self.v0], lr=lr)

    def forward(self):
        self.loss.zero_()
        wp.launch(to_vec, dim=N, inputs=[self.v0], outputs=[self.v_start])
        v = self.v_start
        for t in range(STEPS):
            vn = self.vs[t]
            wp.launch(flight, dim=N, inputs=[self.xs[t], v, self.drag, DT], outputs=[self.xs[t + 1], vn])
            v = vn
        wp.launch(miss_distance, dim=N, inputs=[self.xs[-1], self.targets], outputs=[self.loss])

    def step(self):
        self.tape.reset()
        with self.tape:
            self.forward()
        self.tape.backward(self.loss)
        self.opt.step([self.v0.grad])
        return float(self.loss.numpy()[0])


def targets():
    return np.stack([np.linspace(4.0, 8.0, N), np.linspace(0.0, 1.0, N)], axis=1)


def main(iters=25):
    aimer = Aimer(targets())
    for it in range(iters):
        l = aimer.step()
        if it % 5 == 0:
            print(f"iter {it:3d} miss {l:.5f}")


if __name__ == "__main__":
    main()
