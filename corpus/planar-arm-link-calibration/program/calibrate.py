import argparse

import numpy as np
import warp as wp

from kinematics import sparsity_penalty, tip_error

NOMINAL = np.array([0.45, 0.35, 0.12])


def forward_np(joints, lengths, offsets):
    ang = np.cumsum(joints + offsets, axis=1)
    return np.stack([(lengths * np.cos(ang)).sum(axis=1), (lengths * np.sin(ang)).sum(axis=1)], axis=1)


class LinkCalibration:
    def __init__(self, args, device):
        rng = np.random.default_rng(args.data_seed)
        self.device = device
        self.n = args.poses
        joints = rng.uniform(-1.5, 1.5, size=(self.n, 3))
        true_len = NOMINAL + np.array([0.004, 0.0, -0.002])
        true_off = np.array([0.0, 0.01, 0.0])
        tips = forward_np(joints, true_len, true_off) + rng.normal(0.0, 5e-4, size=(self.n, 2))
        self.joints_np = joints
        self.tips_np = tips
        self.joints = wp.array(joints, dtype=wp.float64, device=device)
        self.measured = wp.array(tips, dtype=wp.vec2d, device=device)
        self.nominal = wp.array(NOMINAL, dtype=wp.float64, device=device)
        self.dlen = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=device)
        self.doff = wp.zeros(3, dtype=wp.float64, requires_grad=True, device=device)
        self.l1 = args.l1
        self.lr = args.lr
        self.params = {"dlen": self.dlen, "doff": self.doff}

    def forward(self):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(tip_error, dim=self.n,
                  inputs=[self.joints, self.measured, self.nominal, self.dlen, self.doff, wp.float64(1.0 / self.n)],
                  outputs=[loss], device=self.device)
        for dev in (self.dlen, self.doff):
            wp.launch(sparsity_penalty, dim=3, inputs=[dev, wp.float64(self.l1)], outputs=[loss], device=self.device)
        return loss

    def loss(self):
        return float(self.forward().numpy()[0])

    def compute_gradients(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return g

    def step(self):
        g = self.compute_gradients()
        for k, v in self.params.items():
            v.assign(v.numpy() - self.lr * g[k])
        return self.loss()


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="sparse link-length and joint-offset calibration of a planar arm")
    p.add_argument("--poses", type=int, default=64)
    p.add_argument("--l1", type=float, default=1e-4)
    p.add_argument("--lr", type=float, default=0.5)
    p.add_argument("--iterations", type=int, default=500)
    p.add_argument("--data-seed", type=int, default=21)
    p.add_argument("--device", default=None)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    wp.init()
    cal = LinkCalibration(args, args.device or wp.get_preferred_device())
    for it in range(args.iterations):
        loss = cal.step()
        if it % 50 == 0:
            print(f"iter {it:4d}  loss {loss:.3e}")
    print("link length deviations [mm]", 1e3 * cal.dlen.numpy())
    print("joint offsets [mrad]", 1e3 * cal.doff.numpy())


if __name__ == "__main__":
    main()
