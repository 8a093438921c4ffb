import numpy as np
import warp as wp


@wp.func
def terrain_height(x: wp.float64, y: wp.float64) -> wp.float64:
    return wp.float64(0.4) * wp.sin(wp.float64(0.7) * x) * wp.cos(wp.float64(0.5) * y) + wp.float64(0.1) * x


@wp.func
def claim_slot(counter: wp.array(dtype=int), slot_of: wp.array(dtype=int), body: int) -> int:
    s = wp.atomic_add(counter, 0, 1)
    slot_of[body] = s
    return s


@wp.kernel
def collide(
    centers: wp.array(dtype=wp.vec3d),
    radius: wp.array(dtype=wp.float64),
    counter: wp.array(dtype=int),
    slot_of: wp.array(dtype=int),
    contact_body: wp.array(dtype=int),
    contact_depth: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    c = centers[i]
    depth = radius[i] - (c[2] - terrain_height(c[0], c[1]))
    if depth > wp.float64(0.0):
        s = claim_slot(counter, slot_of, i)
        if s < contact_depth.shape[0]:
            contact_body[s] = i
            contact_depth[s] = depth


@wp.kernel
def contact_energy(
    counter: wp.array(dtype=int),
    contact_depth: wp.array(dtype=wp.float64),
    stiffness: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    s = wp.tid()
    if s < wp.min(counter[0], contact_depth.shape[0]):
        d = contact_depth[s]
        wp.atomic_add(energy, 0, wp.float64(0.5) * stiffness * d * d)


@wp.kernel
def potential_energy(
    centers: wp.array(dtype=wp.vec3d),
    mass: wp.array(dtype=wp.float64),
    gravity: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    wp.atomic_add(energy, 0, mass[i] * gravity * centers[i][2])


class BoulderField:
    def __init__(self, device, n):
        self.device = device
        self.n = n
        self.capacity = 4 * n
        self.gravity = 9.81
        self.stiffness = 2.0e4
        rng = np.random.default_rng(41)
        r = rng.uniform(0.3, 0.6, n)
        xy = rng.uniform(0.0, 8.0, size=(n, 2))
        h = 0.4 * np.sin(0.7 * xy[:, 0]) * np.cos(0.5 * xy[:, 1]) + 0.1 * xy[:, 0]
        z = h + r + rng.uniform(-0.08, 0.04, n)
        self.radius = wp.array(r, dtype=wp.float64, device=device)
        self.mass = wp.array(2600.0 * 4.0 / 3.0 * np.pi * r**3 / 1000.0, dtype=wp.float64, device=device)
        self.centers = wp.array(np.column_stack([xy, z]), dtype=wp.vec3d, device=device, requires_grad=True)
        self.params = {"centers": self.centers}
        self.last = None

    def energy(self):
        counter = wp.zeros(1, dtype=int, device=self.device)
        slot_of = wp.full(self.n, -1, dtype=int, device=self.device)
        contact_body = wp.zeros(self.capacity, dtype=int, device=self.device)
        contact_depth = wp.zeros(self.capacity, dtype=wp.float64, device=self.device, requires_grad=True)
        energy = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            collide,
            dim=self.n,
            inputs=[self.centers, self.radius],
            outputs=[counter, slot_of, contact_body, contact_depth],
            device=self.device,
        )
        wp.launch(
            contact_energy,
            dim=self.capacity,
            inputs=[counter, contact_depth, wp.float64(self.stiffness)],
            outputs=[energy],
            device=self.device,
        )
        wp.launch(
            potential_energy,
            dim=self.n,
            inputs=[self.centers, self.mass, wp.float64(self.gravity)],
            outputs=[energy],
            device=self.device,
        )
        self.last = (slot_of, contact_depth)
        return energy

    def contact_loads(self):
        self.energy()
        slot_of, contact_depth = self.last
        slots = slot_of.numpy()
        depth = contact_depth.numpy()
        return np.where(slots >= 0, self.stiffness * depth[np.maximum(slots, 0)], 0.0)

    def objective(self):
        return float(self.energy().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            energy = self.energy()
        tape.backward(energy)
        g = {"centers": self.centers.grad.numpy().copy()}
        tape.zero()
        return g

    def train(self, iterations, lr=1.0e-5):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["centers"]
            self.centers.assign(self.centers.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return BoulderField(device, n=256)
    return BoulderField(device, n=8)
