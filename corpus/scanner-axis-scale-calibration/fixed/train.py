import argparse

import numpy as np
import warp as wp

import scanner


class AxisCalibration:
    def __init__(self, device="cpu", n_points=24, n_heads=4, seed=3):
        rng = np.random.default_rng(seed)
        self.device = device
        self.n = n_points
        raw = rng.uniform(-1.0, 1.0, size=(n_points, 3))
        head = rng.integers(0, n_heads, size=n_points).astype(np.int32)
        true_sx = 1.0 + 0.05 * rng.standard_normal(n_heads)
        ref = raw.copy()
        ref[:, 0] *= true_sx[head]
        ref += 0.002 * rng.standard_normal(ref.shape)
        self.raw = wp.array(raw, dtype=wp.vec3d, device=device)
        self.ref = wp.array(ref, dtype=wp.vec3d, device=device)
        self.head = wp.array(head, dtype=wp.int32, device=device)
        self.sx = wp.array(np.full(n_heads, 0.97), dtype=wp.float64, requires_grad=True, device=device)
        self.loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)

    def forward(self):
        pts = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
        self.loss.zero_()
        wp.launch(scanner.apply_axis_scale, dim=self.n, inputs=[self.raw, self.head, self.sx, pts], device=self.device)
        wp.launch(
            scanner.residual,
            dim=self.n,
            inputs=[pts, self.ref, wp.float64(1.0 / self.n)],
            outputs=[self.loss],
            device=self.device,
        )
        return pts

    def evaluate(self):
        self.forward()
        return float(self.loss.numpy()[0])

    def compute_grad(self):
        tape = wp.Tape()
        with tape:
            self.forward()
        tape.backward(loss=self.loss)
        g = self.sx.grad.numpy().copy()
        tape.zero()
        return g

    def step(self, lr):
        g = self.compute_grad()
        self.sx.assign(self.sx.numpy() - lr * g)
        return self.evaluate()


def main():
    parser = argparse.ArgumentParser(description="fit per-head x-axis scale of a multi-head scanner")
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--points", type=int, default=24)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    calib = AxisCalibration(args.device, n_points=args.points)
    for it in range(args.iters):
        loss = calib.step(args.lr)
        if it % 20 == 0:
            print(f"iter {it:4d} loss {loss:.6e} sx {calib.sx.numpy()}")


if __name__ == "__main__":
    main()
