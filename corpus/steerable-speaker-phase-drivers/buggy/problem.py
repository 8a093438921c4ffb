import numpy as np
import warp as wp


@wp.func
def driver_phase(command: wp.float64, step: wp.float64):
    return step * wp.round(command / step)


@wp.func_grad(driver_phase)
def adj_driver_phase(command: wp.float64, step: wp.float64, adj_ret: wp.float64):
    wp.adjoint[command] += adj_ret


@wp.kernel
def array_factor(
    command: wp.array(dtype=wp.float64),
    steering: wp.array2d(dtype=wp.float64),
    step: wp.float64,
    re: wp.array(dtype=wp.float64),
    im: wp.array(dtype=wp.float64),
):
    d, k = wp.tid()
    psi = driver_phase(command[k], step) + steering[d, k]
    wp.atomic_add(re, d, wp.cos(psi))
    wp.atomic_add(im, d, wp.sin(psi))


@wp.kernel
def beam_loss(
    re: wp.array(dtype=wp.float64),
    im: wp.array(dtype=wp.float64),
    weight: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    d = wp.tid()
    wp.atomic_add(loss, 0, weight[d] * (re[d] * re[d] + im[d] * im[d]))


class SpeakerArray:
    def __init__(self, device, n, bits):
        self.device = device
        self.n = n
        self.step = 2.0 * np.pi / 2**bits
        angles = np.deg2rad(np.array([20.0, -35.0, 50.0]))
        self.weight_np = np.array([-1.0, 0.6, 0.3]) / n**2
        k = np.arange(n)
        self.steering_np = -np.pi * np.outer(np.sin(angles), k)
        self.steering = wp.array(self.steering_np, dtype=wp.float64, device=device)
        self.weight = wp.array(self.weight_np, dtype=wp.float64, device=device)
        rng = np.random.default_rng(41)
        ideal = np.pi * np.sin(angles[0]) * k
        levels = np.round((ideal + rng.uniform(-0.6, 0.6, n)) / self.step)
        start = (levels + rng.uniform(-0.3, 0.3, n)) * self.step
        self.command = wp.array(start, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"command": self.command}

    def forward(self):
        m = self.steering_np.shape[0]
        re = wp.zeros(m, dtype=wp.float64, requires_grad=True, device=self.device)
        im = wp.zeros(m, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(array_factor, dim=(m, self.n), inputs=[self.command, self.steering, wp.float64(self.step)], outputs=[re, im], device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(beam_loss, dim=m, inputs=[re, im, self.weight], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {"command": self.command.grad.numpy().copy()}
        tape.zero()
        return grads

    def reference_gradient(self):
        c = self.command.numpy().astype(np.float64)
        psi = self.step * np.round(c / self.step) + self.steering_np
        re = np.cos(psi).sum(axis=1, keepdims=True)
        im = np.sin(psi).sum(axis=1, keepdims=True)
        d_psi = 2.0 * (-re * np.sin(psi) + im * np.cos(psi))
        return {"command": (self.weight_np[:, None] * d_psi).sum(axis=0)}

    def train(self, iterations, lr=2.0):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["command"]
            self.command.assign(self.command.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return SpeakerArray(device, n=256, bits=3)
    return SpeakerArray(device, n=12, bits=3)
