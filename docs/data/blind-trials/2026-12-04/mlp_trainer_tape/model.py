import numpy as np
import warp as wp

HIDDEN = 6


@wp.kernel
def hidden_layer(x: wp.array(dtype=float), w1: wp.array(dtype=float), b1: wp.array(dtype=float),
                 h: wp.array2d(dtype=float)):
    j, k = wp.tid()
    h[j, k] = wp.tanh(w1[k] * x[j] + b1[k])


@wp.kernel
def output_layer(h: wp.array2d(dtype=float), w2: wp.array(dtype=float), y: wp.array(dtype=float)):
    j, k = wp.tid()
    wp.atomic_add(y, j, w2[k] * h[j, k])


@wp.kernel
def mse(y: wp.array(dtype=float), t: wp.array(dtype=float), loss: wp.array(dtype=float)):
    j = wp.tid()
    d = y[j] - t[j]
    wp.atomic_add(loss, 0, d * d / float(y.shape[0]))


class TinyMLP:
    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        self.w1 = wp.array(rng.normal(0.0, 1.5, HIDDEN), dtype=float, requires_grad=True)
        self.b1 = wp.array(rng.normal(0.0, 0.5, HIDDEN), dtype=float, requires_grad=True)
        self.w2 = wp.array(rng.normal(0.0, 0.5, HIDDEN), dtype=float, requires_grad=True)

    def parameters(self):
        return [self.w1, self.b1, self.w2]

    def __call__(self, x):
        n = x.shape[0]
        h = wp.zeros((n, HIDDEN), dtype=float, requires_grad=True)
        y = wp.zeros(n, dtype=float, requires_grad=True)
        wp.launch(hidden_layer, dim=(n, HIDDEN), inputs=[x, self.w1, self.b1], outputs=[h])
        wp.launch(output_layer, dim=(n, HIDDEN), inputs=[h, self.w2], outputs=[y])
        return y
