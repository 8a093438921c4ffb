import numpy as np
import warp as wp


@wp.func
def spring_energy(a: wp.vec3d, b: wp.vec3d, k: wp.float64, rest: wp.float64):
    d = b - a
    l = wp.length(d)
    s = l - rest
    return wp.float64(0.5) * k * s * s


@wp.kernel
def chain_energy(
    x: wp.array(dtype=wp.vec3d),
    k: wp.float64,
    rest: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    wp.atomic_add(energy, 0, spring_energy(x[i], x[i + 1], k, rest))


@wp.kernel
def handle_energy(
    x: wp.array(dtype=wp.vec3d),
    handle_index: wp.array(dtype=int),
    handle_pos: wp.array(dtype=wp.vec3d),
    k: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    wp.atomic_add(energy, 0, spring_energy(handle_pos[j], x[handle_index[j]], k, wp.float64(0.0)))


@wp.kernel
def gravity_energy(
    x: wp.array(dtype=wp.vec3d),
    mass: wp.float64,
    g: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    wp.atomic_add(energy, 0, mass * g * x[i][1])


class Problem:
    def __init__(self, device, scale):
        self.device = device
        self.n = 4 if scale == "small" else 16
        self.k = 200.0
        self.k_handle = 1000.0
        self.rest = 0.25
        self.mass = 0.1
        self.g = 9.81
        x = np.zeros((self.n, 3))
        for i in range(self.n):
            x[i] = [0.2 * i, -0.1 * i, 0.05 * np.sin(i)]
        self.handle_index = wp.array([0], dtype=int, device=device)
        self.handle_pos = wp.array([x[0]], dtype=wp.vec3d, device=device)
        self.params = {"x": wp.array(x, dtype=wp.vec3d, device=device, requires_grad=True)}
        self.energy = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def _forward(self):
        x = self.params["x"]
        self.energy.zero_()
        wp.launch(
            chain_energy,
            dim=self.n - 1,
            inputs=[x, wp.float64(self.k), wp.float64(self.rest)],
            outputs=[self.energy],
            device=self.device,
        )
        wp.launch(
            handle_energy,
            dim=self.handle_index.shape[0],
            inputs=[x, self.handle_index, self.handle_pos, wp.float64(self.k_handle)],
            outputs=[self.energy],
            device=self.device,
        )
        wp.launch(
            gravity_energy,
            dim=self.n,
            inputs=[x, wp.float64(self.mass), wp.float64(self.g)],
            outputs=[self.energy],
            device=self.device,
        )

    def objective(self):
        self._forward()
        return float(self.energy.numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            self._forward()
        tape.backward(self.energy)
        g = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device, scale)
