import numpy as np
import warp as wp

from materials import contact_force


@wp.kernel
def foot_forces(
    base_height: wp.array(dtype=wp.float64),
    foot_offset: wp.array(dtype=wp.float64),
    ground: wp.array(dtype=wp.float64),
    stiffness: wp.float64,
    sharpness: wp.float64,
    force: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    gap = base_height[0] + foot_offset[i] - ground[i]
    force[i] = contact_force(gap, stiffness, sharpness)


@wp.kernel
def load_misfit(
    force: wp.array(dtype=wp.float64),
    desired: wp.array(dtype=wp.float64),
    scale: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    r = (force[i] - desired[i]) / scale
    wp.atomic_add(loss, 0, r * r)


class Problem:
    def __init__(self, device, scale):
        self.device = device
        self.n = 4 if scale == "small" else 16
        self.stiffness = 2.0e4
        self.sharpness = 2.0e3
        rng = np.random.default_rng(7)
        ground = rng.uniform(-0.02, 0.02, size=self.n)
        ground[0] = 0.45
        offset = rng.uniform(-0.01, 0.01, size=self.n)
        desired = np.full(self.n, 120.0) + rng.uniform(-20.0, 20.0, size=self.n)
        self.ground = wp.array(ground, dtype=wp.float64, device=device)
        self.desired = wp.array(desired, dtype=wp.float64, device=device)
        self.params = {
            "base_height": wp.array([0.0], dtype=wp.float64, device=device, requires_grad=True),
            "foot_offset": wp.array(offset, dtype=wp.float64, device=device, requires_grad=True),
        }
        self.force = wp.zeros(self.n, dtype=wp.float64, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()

    def _forward(self):
        self.loss.zero_()
        wp.launch(
            foot_forces,
            dim=self.n,
            inputs=[
                self.params["base_height"],
                self.params["foot_offset"],
                self.ground,
                wp.float64(self.stiffness),
                wp.float64(self.sharpness),
            ],
            outputs=[self.force],
            device=self.device,
        )
        wp.launch(
            load_misfit,
            dim=self.n,
            inputs=[self.force, self.desired, wp.float64(100.0)],
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
        g = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        self.tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device, scale)
