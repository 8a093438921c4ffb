import argparse

import numpy as np
import warp as wp

from model import HeatSink


def main():
    ap = argparse.ArgumentParser(description="fit fin conductances to measured heat flux")
    ap.add_argument("--fins", type=int, default=12)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    wp.init()
    sink = HeatSink(args.device, args.fins)
    for it in range(args.iters):
        loss, g = sink.step_gradient()
        sink.conductance.assign(np.maximum(sink.conductance.numpy() - args.lr * g, 0.05))
        if it % 20 == 0:
            print(f"iter {it:4d} loss {loss:.5f}")


if __name__ == "__main__":
    main()
