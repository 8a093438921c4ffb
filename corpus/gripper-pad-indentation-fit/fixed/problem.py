import numpy as np
import warp as wp

from contact_law import hertz_force


@wp.kernel
def indentation_misfit(
    depth: wp.array2d(dtype=wp.float64),
    force: wp.array2d(dtype=wp.float64),
    stiffness: wp.array(dtype=wp.float64),
    offset: wp.array(dtype=wp.float64),
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    p, j = wp.tid()
    f = hertz_force(depth[p, j] - offset[p], stiffness[p])
    r = f - force[p, j]
    wp.atomic_add(loss, 0, scale * r * r)


class PadFit:
    def __init__(self, device, pads, samples):
        self.device = device
        self.shape = (pads, samples)
        rng = np.random.default_rng(14)
        true_k = rng.uniform(2.0, 4.0, pads)
        true_off = rng.uniform(0.05, 0.15, pads)
        depth = np.sort(rng.uniform(0.2, 1.2, size=(pads, samples)), axis=1)
        d = np.maximum(depth - true_off[:, None], 0.0)
        force = true_k[:, None] * d**1.5 + rng.normal(0.0, 0.01, size=d.shape)
        self.depth = wp.array(depth, dtype=wp.float64, device=device)
        self.force = wp.array(force, dtype=wp.float64, device=device)
        self.stiffness = wp.array(np.full(pads, 3.0), dtype=wp.float64, requires_grad=True, device=device)
        self.offset = wp.array(np.full(pads, 0.1), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"stiffness": self.stiffness, "offset": self.offset}

    def forward(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(indentation_misfit, dim=self.shape,
                  inputs=[self.depth, self.force, self.stiffness, self.offset,
                          wp.float64(1.0 / (self.shape[0] * self.shape[1]))],
                  outputs=[loss], device=self.device)
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

    def train(self, iterations, lr=0.5):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    return PadFit(device, 64 if scale == "production" else 4, 12)
