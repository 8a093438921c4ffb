import numpy as np
import warp as wp


@wp.kernel
def wrap_misfit(
    u: wp.array(dtype=wp.float64),
    decal: wp.array(dtype=wp.int32),
    offset: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    s = wp.frac(u[i] + offset[decal[i]])
    d = s - target[i]
    wp.atomic_add(loss, 0, d * d)


class DecalFit:
    def __init__(self, device, decals, samples):
        rng = np.random.default_rng(11)
        self.device = device
        n = decals * samples
        self.n = n
        self.u = wp.array(rng.uniform(0.1, 0.3, size=n), dtype=wp.float64, device=device)
        self.decal = wp.array(np.repeat(np.arange(decals), samples).astype(np.int32), dtype=wp.int32, device=device)
        self.offset = wp.array(rng.uniform(1.2, 1.4, size=decals), dtype=wp.float64, requires_grad=True, device=device)
        self.target = wp.array(rng.uniform(0.35, 0.65, size=n), dtype=wp.float64, device=device)
        self.params = {"offset": self.offset}

    def run(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(wrap_misfit, dim=self.n, inputs=[self.u, self.decal, self.offset, self.target], outputs=[loss],
                  device=self.device)
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        g = self.offset.grad.numpy().copy()
        tape.zero()
        return {"offset": g}

    def train(self, iterations):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            self.offset.assign(self.offset.numpy() - 0.05 * self.gradient()["offset"])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return DecalFit(device, decals=64, samples=64)
    return DecalFit(device, decals=4, samples=4)
