import argparse

import numpy as np
import warp as wp


@wp.kernel
def branch_currents(
    supply: wp.array(dtype=wp.float64),
    resist: wp.array(dtype=wp.vec3d),
    current: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    v = supply[i]
    current[i] = wp.cw_div(wp.vec3d(v, v, v), resist[i])


@wp.kernel
def ammeter_misfit(
    current: wp.array(dtype=wp.vec3d),
    measured: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = current[i] - measured[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def main():
    ap = argparse.ArgumentParser(description="fit heater branch resistances and board supply voltages to ammeter readings")
    ap.add_argument("--boards", type=int, default=5)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    wp.init()
    n = args.boards
    rng = np.random.default_rng(args.seed)
    r_true = rng.uniform(1.5, 3.0, (n, 3))
    v_true = rng.uniform(2.2, 2.6, n)
    amps = v_true[:, None] / r_true + rng.normal(0.0, 0.005, (n, 3))

    measured = wp.array(amps, dtype=wp.vec3d)
    resist = wp.array(np.full((n, 3), 2.0), dtype=wp.vec3d, requires_grad=True)
    supply = wp.array(np.full(n, 2.4), dtype=wp.float64, requires_grad=True)
    current = wp.zeros(n, dtype=wp.vec3d, requires_grad=True)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(branch_currents, dim=n, inputs=[supply, resist], outputs=[current])
            wp.launch(ammeter_misfit, dim=n, inputs=[current, measured], outputs=[loss])
        tape.backward(loss)
        resist.assign(resist.numpy() - args.lr * resist.grad.numpy())
        supply.assign(supply.numpy() - args.lr * supply.grad.numpy())
        tape.zero()
        if it % 20 == 0:
            print(f"iter {it:3d}  current misfit {loss.numpy()[0]:.4e}")
    print("branch resistances", resist.numpy())
    print("supply voltages", supply.numpy())


if __name__ == "__main__":
    main()
