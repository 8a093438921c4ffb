import numpy as np
import warp as wp


@wp.kernel
def splat(
    position: wp.array(dtype=wp.float64),
    intensity: wp.array(dtype=wp.float64),
    image: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    p = position[i]
    c = wp.round(p)
    k = int(c)
    wp.atomic_add(image, k, intensity[i])


@wp.kernel
def image_loss(
    image: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    d = image[j] - target[j]
    wp.atomic_add(loss, 0, d * d)


class Problem:
    def __init__(self, device, pixels, emitters):
        self.device = device
        self.pixels = pixels
        self.emitters = emitters
        rng = np.random.default_rng(11)
        spacing = (pixels - 4) / emitters
        base = 2.0 + spacing * (np.arange(emitters) + 0.5)
        position = np.floor(base) + rng.uniform(0.15, 0.35, emitters) + 0.5 * rng.integers(0, 2, emitters)
        intensity = rng.uniform(0.5, 1.0, emitters)
        true_position = position + rng.uniform(-0.8, 0.8, emitters)
        true_intensity = intensity + rng.uniform(-0.2, 0.2, emitters)
        target = np.zeros(pixels)
        for p, a in zip(true_position, true_intensity):
            k = int(np.floor(p))
            w = p - k
            target[k] += (1.0 - w) * a
            target[k + 1] += w * a
        self.params = {
            "position": wp.array(position, dtype=wp.float64, device=device, requires_grad=True),
            "intensity": wp.array(intensity, dtype=wp.float64, device=device, requires_grad=True),
        }
        self.target = wp.array(target, dtype=wp.float64, device=device)
        self.image = wp.zeros(pixels, dtype=wp.float64, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()

    def _forward(self):
        self.image.zero_()
        self.loss.zero_()
        wp.launch(
            splat,
            dim=self.emitters,
            inputs=[self.params["position"], self.params["intensity"]],
            outputs=[self.image],
            device=self.device,
        )
        wp.launch(
            image_loss,
            dim=self.pixels,
            inputs=[self.image, self.target],
            outputs=[self.loss],
            device=self.device,
        )

    def objective(self):
        self._forward()
        return float(self.loss.numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            self._forward()
        self.tape.backward(self.loss)
        out = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        self.tape.zero()
        return out

    def train(self, iterations, lr=0.1):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, arr in self.params.items():
                arr.assign(arr.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, pixels=256, emitters=48)
    return Problem(device, pixels=16, emitters=4)
