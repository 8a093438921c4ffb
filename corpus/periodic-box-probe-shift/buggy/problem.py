import numpy as np
import warp as wp


@wp.kernel
def wrapped_misfit(
    pos: wp.array(dtype=wp.vec3d),
    shift: wp.array(dtype=wp.vec3d),
    box: wp.vec3d,
    target: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    q = wp.mod(pos[i] + shift[0], box)
    d = q - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class ProbeShift:
    def __init__(self, device, n):
        rng = np.random.default_rng(5)
        self.device = device
        self.n = n
        self.box = wp.vec3d(2.0, 2.0, 3.0)
        self.pos = wp.array(rng.uniform(0.2, 0.6, size=(n, 3)), dtype=wp.vec3d, device=device)
        self.shift = wp.array(np.array([[2.3, 2.5, 3.4]]), dtype=wp.vec3d, requires_grad=True, device=device)
        self.target = wp.array(rng.uniform(0.5, 1.2, size=(n, 3)), dtype=wp.vec3d, device=device)
        self.params = {"shift": self.shift}

    def run(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(wrapped_misfit, dim=self.n, inputs=[self.pos, self.shift, self.box, self.target], outputs=[loss],
                  device=self.device)
        return loss

    def objective(self):
        return float(self.run().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.run()
        tape.backward(loss=loss)
        g = self.shift.grad.numpy().copy()
        tape.zero()
        return {"shift": g}

    def train(self, iterations):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            self.shift.assign(self.shift.numpy() - 0.02 * self.gradient()["shift"])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return ProbeShift(device, n=4096)
    return ProbeShift(device, n=8)
