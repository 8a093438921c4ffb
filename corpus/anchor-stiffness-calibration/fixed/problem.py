import numpy as np
import warp as wp


@wp.kernel
def node_displacement(
    nodes: wp.array(dtype=wp.vec2d),
    anchors: wp.array(dtype=wp.vec2d),
    stiffness: wp.array(dtype=wp.float64),
    load: wp.array(dtype=wp.vec2d),
    disp: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    K = wp.mat22d()
    for s in range(3):
        n = wp.normalize(anchors[i * 3 + s] - nodes[i])
        ks = stiffness[i * 3 + s]
        K[0, 0] += ks * n[0] * n[0]
        K[0, 1] += ks * n[0] * n[1]
        K[1, 0] += ks * n[1] * n[0]
        K[1, 1] += ks * n[1] * n[1]
    disp[i] = wp.inverse(K) * load[i]


@wp.kernel
def misfit(
    disp: wp.array(dtype=wp.vec2d),
    observed: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = disp[i] - observed[i]
    wp.atomic_add(loss, 0, wp.float64(1.0e4) * wp.dot(d, d))


class Problem:
    def __init__(self, device, scale):
        self.device = device
        self.n = 4 if scale == "small" else 64
        rng = np.random.default_rng(11)
        nodes = rng.uniform(-1.0, 1.0, size=(self.n, 2))
        angles = np.array([0.0, 2.0 * np.pi / 3.0, 4.0 * np.pi / 3.0])
        anchors = []
        for i in range(self.n):
            a = angles + rng.uniform(-0.3, 0.3, size=3)
            anchors.append(nodes[i] + np.stack([np.cos(a), np.sin(a)], axis=1))
        anchors = np.concatenate(anchors, axis=0)
        load = rng.uniform(-1.0, 1.0, size=(self.n, 2))
        k_true = rng.uniform(50.0, 150.0, size=3 * self.n)
        k_guess = np.full(3 * self.n, 100.0) + rng.uniform(-5.0, 5.0, size=3 * self.n)
        self.nodes = wp.array(nodes, dtype=wp.vec2d, device=device)
        self.anchors = wp.array(anchors, dtype=wp.vec2d, device=device)
        self.load = wp.array(load, dtype=wp.vec2d, device=device)
        self.params = {"stiffness": wp.array(k_guess, dtype=wp.float64, device=device, requires_grad=True)}
        truth = wp.array(k_true, dtype=wp.float64, device=device)
        self.observed = wp.zeros(self.n, dtype=wp.vec2d, device=device)
        wp.launch(
            node_displacement,
            dim=self.n,
            inputs=[self.nodes, self.anchors, truth, self.load],
            outputs=[self.observed],
            device=device,
        )
        self.disp = wp.zeros(self.n, dtype=wp.vec2d, device=device, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)

    def _forward(self):
        self.loss.zero_()
        wp.launch(
            node_displacement,
            dim=self.n,
            inputs=[self.nodes, self.anchors, self.params["stiffness"], self.load],
            outputs=[self.disp],
            device=self.device,
        )
        wp.launch(misfit, dim=self.n, inputs=[self.disp, self.observed], outputs=[self.loss], device=self.device)

    def objective(self):
        self._forward()
        return float(self.loss.numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            self._forward()
        tape.backward(self.loss)
        g = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device, scale)
