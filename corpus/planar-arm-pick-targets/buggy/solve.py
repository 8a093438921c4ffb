import argparse

import numpy as np
import warp as wp

from ik import BatchIK


def pick_targets(n, seed=1):
    rng = np.random.default_rng(seed)
    r = 0.5 + 0.4 * rng.random(n)
    th = 0.2 + 1.2 * rng.random(n)
    goals = np.stack([r * np.cos(th), r * np.sin(th)], axis=1)
    q0 = np.tile(np.array([0.5, 0.5, 0.5]), (n, 1)) + 0.1 * rng.standard_normal((n, 3))
    return goals, q0


def build(n, device=None):
    goals, q0 = pick_targets(n)
    return BatchIK(goals, q0, device=device)


def main():
    ap = argparse.ArgumentParser(description="batched inverse kinematics for a 3-link planar arm")
    ap.add_argument("--targets", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=400)
    ap.add_argument("--device", default=None)
    ap.add_argument("--plot", action="store_true")
    args = ap.parse_args()
    wp.init()
    solver = build(args.targets, args.device)

    def log(it, c, g):
        if it % 40 == 0:
            print(f"{it:4d} cost={c:.6f} |g|={np.linalg.norm(g):.4f}")

    solver.solve(args.iterations, log)
    if args.plot:
        import matplotlib.pyplot as plt
        tips = solver.tips.numpy()
        goals = solver.goals.numpy()
        plt.scatter(goals[:, 0], goals[:, 1], marker="x")
        plt.scatter(tips[:, 0], tips[:, 1], marker="o")
        plt.axis("equal")
        plt.show()


if __name__ == "__main__":
    main()
