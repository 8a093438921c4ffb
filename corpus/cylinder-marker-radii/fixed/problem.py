import numpy as np
import warp as wp


@wp.kernel
def place_markers(
    radius: wp.array(dtype=wp.float64),
    theta: wp.array(dtype=wp.float64),
    height: wp.array(dtype=wp.float64),
    points: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    r = radius[i]
    points[i] = wp.vec3d(r * wp.cos(theta[i]), r * wp.sin(theta[i]), height[i] + wp.float64(0.1) * r)


@wp.kernel
def marker_loss(
    points: wp.array(dtype=wp.vec3d),
    observed: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = points[i] - observed[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Problem:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        rng = np.random.default_rng(3)
        theta = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
        height = rng.uniform(0.0, 1.0, n)
        true_radius = rng.uniform(0.8, 1.2, n)
        obs = np.stack(
            [true_radius * np.cos(theta), true_radius * np.sin(theta), height + 0.1 * true_radius], axis=1
        )
        obs += rng.normal(0.0, 0.01, obs.shape)
        self.params = {
            "radius": wp.array(np.ones(n), dtype=wp.float64, device=device, requires_grad=True),
        }
        self.theta = wp.array(theta, dtype=wp.float64, device=device)
        self.height = wp.array(height, dtype=wp.float64, device=device)
        self.observed = wp.array(obs, dtype=wp.vec3d, device=device)
        self.points = wp.zeros(n, dtype=wp.vec3d, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()

    def _forward(self):
        self.loss.zero_()
        wp.launch(
            place_markers,
            dim=self.n,
            inputs=[self.params["radius"], self.theta, self.height],
            outputs=[self.points],
            device=self.device,
        )
        wp.launch(
            marker_loss,
            dim=self.n,
            inputs=[self.points, self.observed],
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

    def train(self, iterations, lr=0.2):
        losses = []
        radius = self.params["radius"]
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["radius"]
            radius.assign(radius.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n=256)
    return Problem(device, n=8)
