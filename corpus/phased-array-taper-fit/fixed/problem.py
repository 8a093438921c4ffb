import numpy as np
import warp as wp


@wp.kernel
def array_factor(
    amplitude: wp.array(dtype=wp.float64),
    steer: wp.array(dtype=wp.float64),
    sin_theta: wp.array(dtype=wp.float64),
    spacing: wp.float64,
    re: wp.array(dtype=wp.float64),
    im: wp.array(dtype=wp.float64),
):
    k, j = wp.tid()
    phase = spacing * wp.float64(j) * sin_theta[k] - steer[j]
    wp.atomic_add(re, k, amplitude[j] * wp.cos(phase))
    wp.atomic_add(im, k, amplitude[j] * wp.sin(phase))


@wp.kernel
def pattern_power(
    re: wp.array(dtype=wp.float64),
    im: wp.array(dtype=wp.float64),
    power: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    power[k] = re[k] * re[k] + im[k] * im[k]


@wp.kernel
def mask_penalty(
    power: wp.array(dtype=wp.float64),
    mask: wp.array(dtype=wp.float64),
    weight: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    d = power[k] - mask[k]
    wp.atomic_add(loss, 0, weight[k] * d * d)


class TaperDesign:
    def __init__(self, device, elements, angles):
        self.device = device
        self.n = elements
        self.m = angles
        theta = np.linspace(-np.pi / 2, np.pi / 2, angles)
        self.sin_theta = wp.array(np.sin(theta), dtype=wp.float64, device=device)
        self.spacing = np.pi
        steer_angle = 0.2
        self.steer = wp.array(self.spacing * np.arange(elements) * np.sin(steer_angle), dtype=wp.float64, device=device)
        main = np.exp(-((theta - steer_angle) ** 2) / 0.02)
        self.mask = wp.array(main, dtype=wp.float64, device=device)
        self.weight = wp.array(np.where(main > 0.1, 1.0, 4.0), dtype=wp.float64, device=device)
        a = 1.0 / elements * (1.0 + 0.1 * np.cos(np.arange(elements)))
        self.amplitude = wp.array(a, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"amplitude": self.amplitude}
        self.tape = wp.Tape()

    def forward(self):
        re = wp.zeros(self.m, dtype=wp.float64, requires_grad=True, device=self.device)
        im = wp.zeros(self.m, dtype=wp.float64, requires_grad=True, device=self.device)
        power = wp.zeros(self.m, dtype=wp.float64, requires_grad=True, device=self.device)
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            array_factor,
            dim=(self.m, self.n),
            inputs=[self.amplitude, self.steer, self.sin_theta, wp.float64(self.spacing)],
            outputs=[re, im],
            device=self.device,
        )
        wp.launch(pattern_power, dim=self.m, inputs=[re, im], outputs=[power], device=self.device)
        wp.launch(mask_penalty, dim=self.m, inputs=[power, self.mask, self.weight], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            loss = self.forward()
        self.tape.backward(loss)
        return {"amplitude": self.amplitude.grad.numpy().copy()}

    def train(self, iterations, lr=0.01):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["amplitude"]
            self.amplitude.assign(self.amplitude.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return TaperDesign(device, elements=32, angles=181)
    return TaperDesign(device, elements=8, angles=41)
