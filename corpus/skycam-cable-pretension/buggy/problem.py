import numpy as np
import warp as wp


@wp.func
def slack_tension(stretch: wp.float64, sharpness: wp.float64) -> wp.float64:
    z = sharpness * stretch
    return (wp.max(z, wp.float64(0.0)) + wp.log(wp.float64(1.0) + wp.exp(-wp.abs(z)))) / sharpness


@wp.func_grad(slack_tension)
def adj_slack_tension(stretch: wp.float64, sharpness: wp.float64, adj_ret: wp.float64):
    s = wp.float64(1.0) / (wp.float64(1.0) + wp.exp(-sharpness * stretch))
    wp.adjoint[stretch] += adj_ret * sharpness * s


@wp.kernel
def cable_forces(
    anchors: wp.array(dtype=wp.vec3d),
    poses: wp.array(dtype=wp.vec3d),
    rest: wp.array2d(dtype=wp.float64),
    stiffness: wp.float64,
    sharpness: wp.float64,
    force: wp.array(dtype=wp.vec3d),
    tension: wp.array2d(dtype=wp.float64),
):
    w, c = wp.tid()
    d = anchors[c] - poses[w]
    length = wp.length(d)
    t = stiffness * slack_tension(length - rest[w, c], sharpness)
    tension[w, c] = t
    wp.atomic_add(force, w, t * d / length)


@wp.kernel
def equilibrium_loss(
    force: wp.array(dtype=wp.vec3d),
    tension: wp.array2d(dtype=wp.float64),
    weight: wp.vec3d,
    preferred: wp.float64,
    balance: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    w, c = wp.tid()
    r = tension[w, c] / preferred - wp.float64(1.0)
    e = balance * r * r
    if c == 0:
        f = force[w] + weight
        e += wp.dot(f, f) / wp.dot(weight, weight)
    wp.atomic_add(loss, 0, e)


class Skycam:
    def __init__(self, device, waypoints):
        self.device = device
        self.waypoints = waypoints
        self.cables = 4
        self.stiffness = 2000.0
        self.sharpness = 20.0
        self.weight = wp.vec3d(0.0, 0.0, -80.0)
        self.preferred = 60.0
        self.balance = 0.1
        anchors = np.array([[0.0, 0.0, 10.0], [20.0, 0.0, 10.0], [20.0, 12.0, 10.0], [0.0, 12.0, 10.0]])
        rng = np.random.default_rng(31)
        poses = np.stack([rng.uniform(6.0, 14.0, waypoints), rng.uniform(4.0, 8.0, waypoints), rng.uniform(3.0, 5.0, waypoints)], axis=1)
        self.anchors = wp.array(anchors, dtype=wp.vec3d, device=device)
        self.poses = wp.array(poses, dtype=wp.vec3d, device=device)
        lengths = np.linalg.norm(anchors[None, :, :] - poses[:, None, :], axis=2)
        self.rest = wp.array(lengths - 0.03, dtype=wp.float64, device=device, requires_grad=True)
        self.params = {"rest": self.rest}

    def loss(self):
        force = wp.zeros(self.waypoints, dtype=wp.vec3d, device=self.device, requires_grad=True)
        tension = wp.zeros((self.waypoints, self.cables), dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            cable_forces,
            dim=(self.waypoints, self.cables),
            inputs=[self.anchors, self.poses, self.rest, wp.float64(self.stiffness), wp.float64(self.sharpness)],
            outputs=[force, tension],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            equilibrium_loss,
            dim=(self.waypoints, self.cables),
            inputs=[force, tension, self.weight, wp.float64(self.preferred), wp.float64(self.balance)],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {"rest": self.rest.grad.numpy().copy()}
        tape.zero()
        return g

    def train(self, iterations, lr=1.0e-3):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["rest"]
            self.rest.assign(self.rest.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Skycam(device, waypoints=64)
    return Skycam(device, waypoints=3)
