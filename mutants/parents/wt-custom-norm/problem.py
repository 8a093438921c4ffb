import numpy as np
import warp as wp


@wp.func
def custom_norm(v: wp.vec3d):
    return wp.length(v)


@wp.func_grad(custom_norm)
def adj_custom_norm(v: wp.vec3d, adj_ret: wp.float64):
    wp.adjoint[v] += wp.normalize(v) * adj_ret


@wp.func
def nested_norm(v: wp.vec3d):
    return custom_norm(v)


@wp.kernel
def norms_of(vectors: wp.array(dtype=wp.vec3d), scale: wp.array(dtype=wp.float64), norms: wp.array(dtype=wp.float64)):
    i = wp.tid()
    norms[i] = nested_norm(vectors[i] * scale[i])


@wp.kernel
def spread(norms: wp.array(dtype=wp.float64), target: wp.float64, loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = norms[i] - target
    wp.atomic_add(loss, 0, d * d)


class CustomNorm:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(7)
        self.vectors = wp.array(rng.normal(size=(n, 3)), dtype=wp.vec3d, device=device, requires_grad=True)
        self.scale = wp.array(np.linspace(0.5, 1.5, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"vectors": self.vectors, "scale": self.scale}

    def forward(self):
        norms = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(norms_of, dim=self.n, inputs=[self.vectors, self.scale], outputs=[norms], device=self.device)
        wp.launch(spread, dim=self.n, inputs=[norms, wp.float64(1.0)], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return CustomNorm(device, 100 if scale == "production" else 4)
