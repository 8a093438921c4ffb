import argparse

import numpy as np
import warp as wp

from slab import CheckpointedSlab


@wp.kernel
def update(kappa: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64, floor: wp.float64):
    i = wp.tid()
    kappa[i] = wp.max(kappa[i] - lr * g[i], floor)


def main():
    parser = argparse.ArgumentParser(description="recover layer conductivities of a forged slab from a quench record")
    parser.add_argument("--cells", type=int, default=8)
    parser.add_argument("--segments", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--iters", type=int, default=25)
    parser.add_argument("--lr", type=float, default=1.0)
    args = parser.parse_args()

    slab = CheckpointedSlab(args.cells, args.segments, args.steps)
    t0 = wp.array(np.full(args.cells, 1.0), dtype=wp.float64)
    true_k = wp.array(np.linspace(1.2, 0.6, args.cells), dtype=wp.float64)
    probe = wp.zeros(args.cells, dtype=wp.float64)
    cur = wp.clone(t0)
    for _ in range(args.segments):
        cur = wp.clone(slab.run(wp.clone(cur), true_k))
    probe.assign(cur.numpy())
    kappa = wp.array(np.full(args.cells, 0.9), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        m = slab.loss_and_grad(t0, kappa, probe)
        wp.launch(update, dim=args.cells, inputs=[kappa, kappa.grad, wp.float64(args.lr), wp.float64(0.05)])
        kappa.grad.zero_()
        print(f"iteration {it}: probe misfit {m:.6e}")
    print("kappa", kappa.numpy())


if __name__ == "__main__":
    main()
