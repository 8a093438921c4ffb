"""Tune the spring stiffnesses of an eight-mass chain so that it reaches a target shape after 1.2 s.

The rollout runs untaped in three segments, saving the state at each segment start; the backward
pass replays the segments in reverse under their own tapes, seeding each segment's end state with
the adjoint carried back from the segment after it.
"""
import numpy as np
import warp as wp
import warp.optim

wp.init()

N = 8
SEG = 20
N_SEG = 3
DT = 0.02
DAMPING = 0.1


@wp.kernel
def chain_step(x: wp.array(dtype=float), v: wp.array(dtype=float), k: wp.array(dtype=float),
               damping: float, dt: float, x_out: wp.array(dtype=float), v_out: wp.array(dtype=float)):
    i = wp.tid()
    n = x.shape[0]
    f = -k[i] * x[i] - damping * v[i]
    if i > 0:
        f = f + k[i] * x[i - 1]
    if i < n - 1:
        f = f + k[i + 1] * (x[i + 1] - x[i])
    vn = v[i] + dt * f
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def shape_error(x: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, d * d / float(x.shape[0]))


class Chain:
    def __init__(self, x0, target, k0):
        self.x0 = wp.array(x0, dtype=float)
        self.target = wp.array(target, dtype=float)
        self.k = wp.array(k0, dtype=float, requires_grad=True)
        self.xs = [wp.zeros(N, dtype=float, requires_grad=True) for _ in range(SEG + 1)]
        self.vs = [wp.zeros(N, dtype=float, requires_grad=True) for _ in range(SEG + 1)]
        self.ckpt_x = [wp.zeros(N, dtype=float) for _ in range(N_SEG)]
        self.ckpt_v = [wp.zeros(N, dtype=float) for _ in range(N_SEG)]
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)

    def segment(self):
        for t in range(SEG):
            wp.launch(chain_step, dim=N, inputs=[self.xs[t], self.vs[t], self.k, DAMPING, DT],
                      outputs=[self.xs[t + 1], self.vs[t + 1]])

    def forward(self):
        wp.copy(self.xs[0], self.x0)
        self.vs[0].zero_()
        for s in range(N_SEG):
            wp.copy(self.ckpt_x[s], self.xs[0])
            wp.copy(self.ckpt_v[s], self.vs[0])
            self.segment()
            if s < N_SEG - 1:
                wp.copy(self.xs[0], self.xs[SEG])
                wp.copy(self.vs[0], self.vs[SEG])
        self.loss.zero_()
        wp.launch(shape_error, dim=N, inputs=[self.xs[SEG], self.target], outputs=[self.loss])
        return float(self.loss.numpy()[0])

    def backward(self):
        self.k.grad.zero_()
        adj_x = adj_v = None
        for s in range(N_SEG - 1, -1, -1):
            wp.copy(self.xs[0], self.ckpt_x[s])
            wp.copy(self.vs[0], self.ckpt_v[s])
            for a in self.xs + self.vs:
                a.grad.zero_()
            tape = wp.Tape()
            with tape:
                self.segment()
                if s == N_SEG - 1:
                    self.loss.zero_()
                    wp.launch(shape_error, dim=N, inputs=[self.xs[SEG], self.target], outputs=[self.loss])
            if s == N_SEG - 1:
                tape.backward(self.loss)
            else:
                tape.backward(grads={self.xs[SEG]: adj_x, self.vs[SEG]: adj_v})
            adj_x = wp.clone(self.xs[0].grad)
            adj_v = wp.clone(self.vs[0].grad)


def main():
    x0 = np.linspace(0.2, -0.2, N).astype(np.float32)
    target = (0.05 * np.sin(np.arange(N))).astype(np.float32)
    chain = Chain(x0, target, np.full(N, 4.0, dtype=np.float32))
    opt = warp.optim.SGD([chain.k], lr=20.0)
    for it in range(30):
        value = chain.forward()
        chain.backward()
        opt.step([chain.k.grad])
        if it % 5 == 0 or it == 29:
            print(f"iter {it:3d}  loss {value:.6e}")
    print("stiffness", np.round(chain.k.numpy(), 3))


if __name__ == "__main__":
    main()
