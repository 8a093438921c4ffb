import numpy as np
import warp as wp


@wp.func
def helper_multiply(x: wp.float64):
    return x * wp.float64(2.0)


@wp.func
def custom_transform(x: wp.float64):
    return helper_multiply(x) + wp.float64(1.0)


@wp.func_grad(custom_transform)
def adj_custom_transform(x: wp.float64, adj_ret: wp.float64):
    wp.adjoint[x] += wp.float64(2.0) * adj_ret


@wp.func
def outer_transform(x: wp.float64):
    return custom_transform(x) * wp.float64(3.0)


@wp.kernel
def transform_all(inputs: wp.array(dtype=wp.float64), outputs: wp.array(dtype=wp.float64)):
    i = wp.tid()
    outputs[i] = outer_transform(inputs[i])


@wp.kernel
def energy(outputs: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, outputs[i] * outputs[i])


class CustomTransform:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.inputs = wp.array(np.linspace(-1.0, 1.0, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"inputs": self.inputs}

    def forward(self):
        outputs = wp.zeros(self.n, dtype=wp.float64, device=self.device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(transform_all, dim=self.n, inputs=[self.inputs], outputs=[outputs], device=self.device)
        wp.launch(energy, dim=self.n, inputs=[outputs], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {"inputs": self.inputs.grad.numpy().copy()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return CustomTransform(device, 200 if scale == "production" else 5)
