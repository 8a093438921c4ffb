import numpy as np
import warp as wp

from magic_formula import magic_core


@wp.kernel
def lateral_force(
    slip: wp.array2d(dtype=wp.float64),
    stiffness: wp.array(dtype=wp.float64),
    shape: wp.array(dtype=wp.float64),
    peak: wp.array(dtype=wp.float64),
    curvature: wp.array(dtype=wp.float64),
    shift_h: wp.array(dtype=wp.float64),
    shift_v: wp.array(dtype=wp.float64),
    force: wp.array2d(dtype=wp.float64),
):
    t, k = wp.tid()
    x = slip[t, k] + shift_h[t]
    force[t, k] = peak[t] * magic_core(x, stiffness[t], shape[t], curvature[t]) + shift_v[t]


@wp.kernel
def force_misfit(
    force: wp.array2d(dtype=wp.float64),
    measured: wp.array2d(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    t, k = wp.tid()
    r = force[t, k] - measured[t, k]
    wp.atomic_add(loss, 0, r * r)


def reference_curve(alpha, B, C, D, E, Sh, Sv):
    x = alpha + Sh
    bx = B * x
    return D * np.sin(C * np.arctan(bx - E * (bx - np.arctan(bx)))) + Sv


class TyreFit:
    def __init__(self, device, tyres, points):
        self.device = device
        self.tyres = tyres
        self.points = points
        rng = np.random.default_rng(9)
        alpha = np.tile(np.linspace(-0.2, 0.2, points), (tyres, 1))
        true = {
            "stiffness": rng.uniform(8.0, 12.0, tyres),
            "shape": rng.uniform(1.3, 1.7, tyres),
            "peak": rng.uniform(3.5, 5.0, tyres),
            "curvature": rng.uniform(-0.5, 0.5, tyres),
            "shift_h": rng.uniform(-0.01, 0.01, tyres),
            "shift_v": rng.uniform(-0.1, 0.1, tyres),
        }
        measured = np.stack(
            [
                reference_curve(alpha[t], *(true[k][t] for k in ("stiffness", "shape", "peak", "curvature", "shift_h", "shift_v")))
                for t in range(tyres)
            ]
        )
        measured += 0.02 * rng.normal(size=measured.shape)
        self.slip = wp.array(alpha, dtype=wp.float64, device=device)
        self.measured = wp.array(measured, dtype=wp.float64, device=device)
        start = {"stiffness": 10.0, "shape": 1.5, "peak": 4.0, "curvature": 0.0, "shift_h": 0.0, "shift_v": 0.0}
        self.params = {
            k: wp.array(np.full(tyres, v) + 0.01 * rng.normal(size=tyres), dtype=wp.float64, device=device, requires_grad=True)
            for k, v in start.items()
        }

    def loss(self):
        p = self.params
        force = wp.zeros((self.tyres, self.points), dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(
            lateral_force,
            dim=(self.tyres, self.points),
            inputs=[self.slip, p["stiffness"], p["shape"], p["peak"], p["curvature"], p["shift_h"], p["shift_v"]],
            outputs=[force],
            device=self.device,
        )
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(force_misfit, dim=(self.tyres, self.points), inputs=[force, self.measured], outputs=[loss], device=self.device)
        return loss

    def objective(self):
        return float(self.loss().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.loss()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def train(self, iterations, lr=0.01):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return TyreFit(device, tyres=48, points=121)
    return TyreFit(device, tyres=3, points=16)
