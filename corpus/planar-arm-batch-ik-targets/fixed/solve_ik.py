import argparse

import numpy as np
import warp as wp

from arm import ArmBatch


class IKSolver:
    def __init__(self, arm, q0=None, step=0.5, decay=0.995):
        self.arm = arm
        init = np.full((arm.n, arm.joints), 0.3, dtype=np.float32) if q0 is None else q0
        self.q = wp.array(init, dtype=float, device=arm.device, requires_grad=True)
        self.step_size = step
        self.decay = decay

    def cost(self):
        self.arm.apply_limits(self.q)
        return float(self.arm.evaluate(self.q).numpy()[0])

    def cost_and_gradient(self):
        tape = wp.Tape()
        with tape:
            self.arm.apply_limits(self.q)
            c = self.arm.evaluate(self.q)
        tape.backward(c)
        g = self.q.grad.numpy().copy()
        tape.zero()
        return float(c.numpy()[0]), g

    def iterate(self, n, verbose=False):
        costs = []
        for k in range(n):
            c, g = self.cost_and_gradient()
            costs.append(c)
            self.q.assign(self.q.numpy() - self.step_size * g)
            self.step_size *= self.decay
            if verbose and k % 10 == 0:
                print(f"{k:4d} cost {c:.5f}")
        return costs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arms", type=int, default=64)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--step", type=float, default=0.5)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    wp.init()
    solver = IKSolver(ArmBatch(args.arms), step=args.step)
    solver.iterate(args.iters, verbose=True)
    if args.show:
        import matplotlib.pyplot as plt

        tips = solver.arm.tips.numpy()
        goals = solver.arm.goals.numpy()
        plt.scatter(goals[:, 0], goals[:, 1], marker="x")
        plt.scatter(tips[:, 0], tips[:, 1], s=6)
        plt.axis("equal")
        plt.show()


if __name__ == "__main__":
    main()
