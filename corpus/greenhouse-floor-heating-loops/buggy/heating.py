import argparse

import numpy as np
import warp as wp

from solver import JacobiSolver


@wp.kernel
def comfort(t: wp.array(dtype=wp.float64), setpoint: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = t[i] - setpoint[i]
    wp.atomic_add(out, 0, d * d)


@wp.kernel
def lower(power: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    power[i] = power[i] - lr * g[i]


def main():
    parser = argparse.ArgumentParser(description="balance greenhouse floor-heating loops to a temperature setpoint")
    parser.add_argument("--cells", type=int, default=10)
    parser.add_argument("--loops", type=int, default=5)
    parser.add_argument("--sweeps", type=int, default=60)
    parser.add_argument("--iters", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.4)
    args = parser.parse_args()

    solver = JacobiSolver(args.cells, args.loops, args.sweeps)
    setpoint = wp.array(18.0 + 2.0 * np.sin(np.linspace(0.0, 3.0, args.cells)), dtype=wp.float64)
    power = wp.array(np.full(args.loops, 8.0), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        t = solver.solve(power)
        loss_tape = wp.Tape()
        with loss_tape:
            err = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(comfort, dim=args.cells, inputs=[t, setpoint], outputs=[err])
        loss_tape.backward(err)
        loss_tape.reset()
        solver.backward(t, t.grad)
        wp.launch(lower, dim=args.loops, inputs=[power, power.grad, wp.float64(args.lr)])
        solver.clear()
        if it % 5 == 0:
            print(f"{it:3d} comfort error {err.numpy()[0]:.5f}")
    print("loop power", power.numpy())


if __name__ == "__main__":
    main()
