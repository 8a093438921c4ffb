"""Recover a heat source profile on a rod from a measured final temperature."""
import numpy as np
import warp as wp

CELLS = 16
STEPS = 30
ALPHA = 0.2
DT = 0.05
COOL = 0.5


@wp.kernel
def diffuse(u: wp.array(dtype=float), q: wp.array(dtype=float), alpha: float, dt: float, cool: float,
            u_out: wp.array(dtype=float)):
    i = wp.tid()
    n = u.shape[0]
    left = float(0.0)
    right = float(0.0)
    if i > 0:
        left = u[i - 1]
    if i < n - 1:
        right = u[i + 1]
    lap = left - 2.0 * u[i] + right
    u_out[i] = u[i] + dt * (alpha * lap / dt + q[i] - cool * u[i] * u[i] * u[i])


@wp.kernel
def misfit(u: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = u[i] - target[i]
    wp.atomic_add(loss, 0, d * d / float(u.shape[0]))


@wp.kernel
def gd_step(q: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, q_out: wp.array(dtype=float)):
    i = wp.tid()
    q_out[i] = q[i] - lr * g[i]


def simulate_np(q):
    u = np.zeros(CELLS)
    for _ in range(STEPS):
        left = np.concatenate([[0.0], u[:-1]])
        right = np.concatenate([u[1:], [0.0]])
        u = u + DT * (ALPHA * (left - 2 * u + right) / DT + q - COOL * u ** 3)
    return u


Q_TRUE = 1.5 * np.exp(-((np.arange(CELLS) - 6.0) / 3.0) ** 2)


class Rod:
    def __init__(self):
        self.states = [wp.zeros(CELLS, dtype=float, requires_grad=True) for _ in range(STEPS + 1)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def forward(self, q, target):
        self.loss.zero_()
        for t in range(STEPS):
            wp.launch(diffuse, dim=CELLS, inputs=[self.states[t], q, ALPHA, DT, COOL], outputs=[self.states[t + 1]])
        wp.launch(misfit, dim=CELLS, inputs=[self.states[-1], target], outputs=[self.loss])
        return self.loss


def main(iters=20, lr=30.0):
    target = wp.array(simulate_np(Q_TRUE), dtype=float)
    rod = Rod()
    q_front = wp.array(np.full(CELLS, 0.3), dtype=float, requires_grad=True)
    q_back = wp.zeros_like(q_front)
    for it in range(iters):
        tape = wp.Tape()
        with tape:
            loss = rod.forward(q_front, target)
        tape.backward(loss)
        wp.launch(gd_step, dim=CELLS, inputs=[q_front, q_front.grad, lr], outputs=[q_back])
        tape.zero()
        q_front, q_back = q_back, q_front
        if it % 5 == 0 or it == iters - 1:
            print(f"iter {it:3d} loss {loss.numpy()[0]:.6e}")


if __name__ == "__main__":
    main()
