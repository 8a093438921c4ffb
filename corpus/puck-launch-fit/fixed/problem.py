import numpy as np
import warp as wp

SUBSTEPS = wp.constant(8)

@wp.kernel
def glide(
    start: wp.array(dtype=wp.vec2d),
    velocity: wp.array(dtype=wp.vec2d),
    decel: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.vec2d),
    h: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    v0 = velocity[i]
    u = wp.normalize(v0)
    disp = wp.vec2d()
    for s in range(SUBSTEPS):
        t = (wp.float64(s) + wp.float64(0.5)) * h
        disp += (v0 - u * (decel[i] * t)) * h
    d = start[i] + disp - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Problem:
    def __init__(self, device, scale):
        self.device = device
        self.n = 4 if scale == "small" else 16
        self.substeps = SUBSTEPS
        self.dt = 0.5
        rng = np.random.default_rng(5)
        start = rng.uniform(-1.0, 1.0, size=(self.n, 2))
        target = start + rng.uniform(0.5, 1.5, size=(self.n, 2))
        velocity = rng.uniform(1.0, 2.0, size=(self.n, 2))
        decel = rng.uniform(0.5, 1.0, size=self.n)
        self.start = wp.array(start, dtype=wp.vec2d, device=device)
        self.target = wp.array(target, dtype=wp.vec2d, device=device)
        self.params = {
            "velocity": wp.array(velocity, dtype=wp.vec2d, device=device, requires_grad=True),
            "decel": wp.array(decel, dtype=wp.float64, device=device, requires_grad=True),
        }
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()

    def _forward(self):
        self.loss.zero_()
        wp.launch(
            glide,
            dim=self.n,
            inputs=[
                self.start,
                self.params["velocity"],
                self.params["decel"],
                self.target,
                wp.float64(self.dt / self.substeps),
            ],
            outputs=[self.loss],
            device=self.device,
        )

    def objective(self):
        self._forward()
        return float(self.loss.numpy()[0])

    def gradient(self):
        with self.tape:
            self._forward()
        self.tape.backward(self.loss)
        g = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        self.tape.zero()
        self.tape.reset()
        return g


def make_problem(device, scale="small"):
    return Problem(device, scale)
