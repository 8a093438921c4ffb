import numpy as np
import warp as wp

from transfer import particles_to_grid


@wp.kernel
def field_misfit(
    grid_vel: wp.array(dtype=wp.vec2d),
    measured: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    c = wp.tid()
    r = grid_vel[c] - measured[c]
    wp.atomic_add(loss, 0, wp.dot(r, r))


class PIVFit:
    def __init__(self, device, n, res):
        self.device = device
        self.res = res
        self.cell_size = 1.0 / res
        self.radius = 1.5 * self.cell_size
        rng = np.random.default_rng(11)
        pos = rng.uniform(0.1, 0.9, size=(n, 2))
        self.pos = wp.array(pos, dtype=wp.vec2d, device=device)
        xs = (np.arange(res) + 0.5) * self.cell_size
        gx, gy = np.meshgrid(xs, xs)
        cx, cy = gx.ravel(), gy.ravel()
        measured = np.stack([-(cy - 0.5), cx - 0.5], axis=1) * 2.0 + 0.1
        self.measured = wp.array(measured, dtype=wp.vec2d, device=device)
        vel0 = np.stack([-(pos[:, 1] - 0.5), pos[:, 0] - 0.5], axis=1) * 1.5
        self.vel = wp.array(vel0, dtype=wp.vec2d, device=device, requires_grad=True)
        self.mass = wp.array(rng.uniform(0.8, 1.2, n), dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"vel": self.vel, "mass": self.mass}

    def loss(self):
        grid_vel = particles_to_grid(self.pos, self.vel, self.mass, self.res, self.cell_size, self.radius)
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(field_misfit, dim=self.res * self.res, inputs=[grid_vel, self.measured], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return PIVFit(device, n=256, res=16)
    return PIVFit(device, n=8, res=4)
