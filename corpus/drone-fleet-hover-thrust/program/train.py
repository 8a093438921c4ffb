import argparse

import numpy as np
import warp as wp

from control import HoverPlanner


def main():
    parser = argparse.ArgumentParser(description="open-loop thrust schedules for a drone fleet climb")
    parser.add_argument("--drones", type=int, default=8)
    parser.add_argument("--horizon", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--device", default=None)
    args = parser.parse_args()

    wp.init()
    planner = HoverPlanner(args.drones, args.horizon, args.seed, args.device)

    def report(i, c):
        if i % 25 == 0:
            print(f"iter {i:4d} cost {c:.5f}")

    planner.optimise(args.iterations, report)
    u = planner.u.numpy()
    print("saturated knots:", int(np.sum((u <= 0.0) | (u >= 2.0))), "of", u.size)


if __name__ == "__main__":
    main()
