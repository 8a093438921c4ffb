import numpy as np
import warp as wp

HIDDEN = wp.constant(8)


@wp.kernel
def mlp_forward(
    x: wp.array(dtype=float),
    w1: wp.array(dtype=float),
    b1: wp.array(dtype=float),
    w2: wp.array(dtype=float),
    b2: wp.array(dtype=float),
    y: wp.array(dtype=float),
):
    i = wp.tid()
    acc = b2[0]
    for h in range(HIDDEN):
        acc += w2[h] * wp.tanh(w1[h] * x[i] + b1[h])
    y[i] = acc


@wp.kernel
def mse_kernel(y: wp.array(dtype=float), target: wp.array(dtype=float), inv_n: float, loss: wp.array(dtype=float)):
    i = wp.tid()
    d = y[i] - target[i]
    wp.atomic_add(loss, 0, d * d * inv_n)


class DamperNet:
    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        h = int(HIDDEN)
        self.w1 = wp.array(rng.normal(0.0, 1.0, h).astype(np.float32), requires_grad=True)
        self.b1 = wp.array(rng.normal(0.0, 0.5, h).astype(np.float32), requires_grad=True)
        self.w2 = wp.array(rng.normal(0.0, 0.3, h).astype(np.float32), requires_grad=True)
        self.b2 = wp.zeros(1, dtype=float, requires_grad=True)

    def parameters(self):
        return [self.w1, self.b1, self.w2, self.b2]

    def __call__(self, x):
        y = wp.zeros(x.shape[0], dtype=float, requires_grad=True)
        wp.launch(mlp_forward, dim=x.shape[0], inputs=[x, self.w1, self.b1, self.w2, self.b2], outputs=[y])
        return y


def mse(y, target):
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    wp.launch(mse_kernel, dim=y.shape[0], inputs=[y, target, 1.0 / y.shape[0]], outputs=[loss])
    return loss
