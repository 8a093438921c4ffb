import argparse

import numpy as np
import warp as wp

from model import affine_loss


def make_param(values):
    return wp.array(np.asarray(values, dtype=np.float64), dtype=wp.float64, requires_grad=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(11)
    x = wp.array(rng.uniform(1.0, 2.0, 3), dtype=wp.float64, requires_grad=True)
    a = make_param([0.5, 1.0, -1.5])
    b = make_param([0.25])
    for step in range(args.steps):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(affine_loss, dim=3, inputs=[a, b, x, loss])
        tape.backward(loss)
        for p in (a, b):
            p.assign(p.numpy() - 0.01 * p.grad.numpy())
        tape.zero()
        print("step", step, "loss", loss.numpy()[0])


if __name__ == "__main__":
    main()
