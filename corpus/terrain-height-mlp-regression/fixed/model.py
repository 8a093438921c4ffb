import numpy as np
import warp as wp


@wp.kernel
def dense_accumulate(
    x: wp.array2d(dtype=float),
    w: wp.array2d(dtype=float),
    out: wp.array2d(dtype=float),
):
    b, j, k = wp.tid()
    wp.atomic_add(out, b, j, w[j, k] * x[b, k])


@wp.kernel
def bias_tanh(z: wp.array2d(dtype=float), bias: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    b, j = wp.tid()
    out[b, j] = wp.tanh(z[b, j] + bias[j])


@wp.kernel
def bias_linear(z: wp.array2d(dtype=float), bias: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    b, j = wp.tid()
    out[b, j] = z[b, j] + bias[j]


class TwoLayerNet:
    def __init__(self, n_in, n_hidden, n_out, batch, seed=0, device=None):
        rng = np.random.default_rng(seed)
        self.device = device
        self.batch = batch
        self.sizes = (n_in, n_hidden, n_out)

        def glorot(fan_out, fan_in):
            lim = np.sqrt(6.0 / (fan_in + fan_out))
            return wp.array(rng.uniform(-lim, lim, (fan_out, fan_in)).astype(np.float32), dtype=float,
                            device=device, requires_grad=True)

        self.w1 = glorot(n_hidden, n_in)
        self.b1 = wp.zeros(n_hidden, dtype=float, device=device, requires_grad=True)
        self.w2 = glorot(n_out, n_hidden)
        self.b2 = wp.zeros(n_out, dtype=float, device=device, requires_grad=True)

        self.z1 = wp.zeros((batch, n_hidden), dtype=float, device=device, requires_grad=True)
        self.h1 = wp.zeros((batch, n_hidden), dtype=float, device=device, requires_grad=True)
        self.z2 = wp.zeros((batch, n_out), dtype=float, device=device, requires_grad=True)
        self.y = wp.zeros((batch, n_out), dtype=float, device=device, requires_grad=True)

    def parameters(self):
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}

    def __call__(self, x):
        n_in, n_hidden, n_out = self.sizes
        self.z1.zero_()
        self.z2.zero_()
        wp.launch(dense_accumulate, dim=(self.batch, n_hidden, n_in), inputs=[x, self.w1], outputs=[self.z1],
                  device=self.device)
        wp.launch(bias_tanh, dim=(self.batch, n_hidden), inputs=[self.z1, self.b1], outputs=[self.h1],
                  device=self.device)
        wp.launch(dense_accumulate, dim=(self.batch, n_out, n_hidden), inputs=[self.h1, self.w2], outputs=[self.z2],
                  device=self.device)
        wp.launch(bias_linear, dim=(self.batch, n_out), inputs=[self.z2, self.b2], outputs=[self.y],
                  device=self.device)
        return self.y
