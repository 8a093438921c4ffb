import argparse

import numpy as np
import warp as wp
import warp.optim


@wp.kernel
def forward_kinematics(
    angles: wp.array(dtype=wp.float32),
    lengths: wp.array(dtype=wp.float32),
    tips: wp.array(dtype=wp.vec2),
):
    i = wp.tid()
    phi = float(0.0)
    p = wp.vec2(0.0, 0.0)
    for j in range(3):
        phi = phi + angles[i * 3 + j]
        p = p + lengths[j] * wp.vec2(wp.cos(phi), wp.sin(phi))
    tips[i] = p


@wp.kernel
def reach_loss(
    tips: wp.array(dtype=wp.vec2),
    targets: wp.array(dtype=wp.vec2),
    angles: wp.array(dtype=wp.float32),
    smooth: float,
    loss: wp.array(dtype=wp.float32),
):
    i = wp.tid()
    d = tips[i] - targets[i]
    e = wp.dot(d, d)
    if i > 0:
        for j in range(3):
            a = angles[i * 3 + j] - angles[(i - 1) * 3 + j]
            e = e + smooth * a * a
    wp.atomic_add(loss, 0, e)


class ReachTrainer:
    def __init__(self, waypoints, seed, lr, smooth):
        rng = np.random.default_rng(seed)
        t = np.linspace(0.2, 1.2, waypoints)
        targets = np.stack([1.2 + 0.4 * np.cos(t), 0.6 + 0.5 * np.sin(2.0 * t)], axis=1)
        self.n = waypoints
        self.smooth = smooth
        self.lengths = wp.array([0.9, 0.7, 0.4], dtype=wp.float32)
        self.targets = wp.array(targets.astype(np.float32), dtype=wp.vec2)
        init = rng.uniform(-0.4, 0.4, size=3 * waypoints).astype(np.float32)
        self.angles = wp.array(init, dtype=wp.float32, requires_grad=True)
        self.tips = wp.zeros(waypoints, dtype=wp.vec2, requires_grad=True)
        self.loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        self.opt = warp.optim.Adam([self.angles], lr=lr)

    def compute_loss(self):
        self.loss.zero_()
        wp.launch(forward_kinematics, dim=self.n, inputs=[self.angles, self.lengths], outputs=[self.tips])
        wp.launch(reach_loss, dim=self.n, inputs=[self.tips, self.targets, self.angles, self.smooth], outputs=[self.loss])
        return self.loss

    def step(self):
        tape = wp.Tape()
        with tape:
            loss = self.compute_loss()
        tape.backward(loss)
        self.opt.step([self.angles.grad])
        tape.zero()
        return float(loss.numpy()[0])


def main():
    parser = argparse.ArgumentParser(description="joint angles for a pick-and-place path")
    parser.add_argument("--waypoints", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--smooth", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    trainer = ReachTrainer(args.waypoints, args.seed, args.lr, args.smooth)
    for epoch in range(args.epochs):
        loss = trainer.step()
        if epoch % 5 == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch:3d}  loss {loss:.5f}")
    np.save("waypoint_angles.npy", trainer.angles.numpy().reshape(-1, 3))


if __name__ == "__main__":
    main()
