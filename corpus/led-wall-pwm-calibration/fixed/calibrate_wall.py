import argparse

import numpy as np
import warp as wp


@wp.kernel
def panel_luminance(
    duty: wp.array(dtype=wp.float64),
    gain: wp.array(dtype=wp.float64),
    gamma: wp.float64,
    lum: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    q = duty[i]
    lum[i] = gain[i] * wp.pow(q, gamma)


@wp.kernel
def luminance_error(lum: wp.array(dtype=wp.float64), target: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = lum[i] - target[i]
    wp.atomic_add(loss, 0, d * d)


def evaluate(duty, gain, target, gamma):
    n = duty.shape[0]
    lum = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(panel_luminance, dim=n, inputs=[duty, gain, wp.float64(gamma)], outputs=[lum])
    wp.launch(luminance_error, dim=n, inputs=[lum, target], outputs=[loss])
    return loss


def main():
    ap = argparse.ArgumentParser(description="match LED panel luminance to a photometer reading")
    ap.add_argument("--panels", type=int, default=8)
    ap.add_argument("--gamma", type=float, default=2.2)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    registers = rng.integers(120, 220, args.panels)
    duty = wp.array(registers / 255.0, dtype=wp.float64, requires_grad=True)
    gain = wp.array(rng.uniform(0.9, 1.1, args.panels), dtype=wp.float64, requires_grad=True)
    target = wp.array(np.full(args.panels, 0.5), dtype=wp.float64)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = evaluate(duty, gain, target, args.gamma)
        tape.backward(loss)
        duty_norm = np.linalg.norm(duty.grad.numpy())
        for p in (duty, gain):
            p.assign(p.numpy() - args.lr * p.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6f}  duty grad norm {duty_norm:.3g}")
    print("registers", np.round(duty.numpy() * 255.0).astype(int))


if __name__ == "__main__":
    main()
