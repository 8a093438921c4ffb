import numpy as np
import warp as wp


@wp.kernel
def affine(
    x: wp.array2d(dtype=float),
    W: wp.array2d(dtype=float),
    b: wp.array(dtype=float),
    z: wp.array2d(dtype=float),
):
    n, o = wp.tid()
    s = b[o]
    for k in range(W.shape[1]):
        s += W[o, k] * x[n, k]
    z[n, o] = s


@wp.kernel
def tanh_act(z: wp.array2d(dtype=float), h: wp.array2d(dtype=float)):
    n, o = wp.tid()
    h[n, o] = wp.tanh(z[n, o])


class Dense:
    def __init__(self, fan_in, fan_out, rng, device, activation=True):
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        self.W = wp.array(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32), device=device, requires_grad=True)
        self.b = wp.array(np.zeros(fan_out, dtype=np.float32), device=device, requires_grad=True)
        self.activation = activation
        self.fan_out = fan_out
        self.cache = {}

    def buffers(self, batch):
        if batch not in self.cache:
            dev = self.W.device
            z = wp.zeros((batch, self.fan_out), dtype=float, device=dev, requires_grad=True)
            h = wp.zeros((batch, self.fan_out), dtype=float, device=dev, requires_grad=True) if self.activation else z
            self.cache[batch] = (z, h)
        return self.cache[batch]

    def __call__(self, x):
        z, h = self.buffers(x.shape[0])
        wp.launch(affine, dim=z.shape, inputs=[x, self.W, self.b], outputs=[z], device=x.device)
        if self.activation:
            wp.launch(tanh_act, dim=z.shape, inputs=[z], outputs=[h], device=x.device)
        return h


class MLP:
    def __init__(self, sizes, seed=0, device="cpu"):
        rng = np.random.default_rng(seed)
        self.layers = [
            Dense(a, b, rng, device, activation=(i < len(sizes) - 2)) for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))
        ]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def named_parameters(self):
        out = {}
        for i, layer in enumerate(self.layers):
            out[f"layer{i}.W"] = layer.W
            out[f"layer{i}.b"] = layer.b
        return out
