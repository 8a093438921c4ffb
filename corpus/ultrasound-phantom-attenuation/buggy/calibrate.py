import argparse

import numpy as np
import warp as wp


@wp.kernel
def echo_model(
    gain: wp.array(dtype=wp.float64),
    alpha: wp.array(dtype=wp.float64),
    depth: wp.array(dtype=wp.float64),
    reflect: wp.array2d(dtype=wp.float64),
    echo: wp.array2d(dtype=wp.float64),
):
    k, d = wp.tid()
    echo[k, d] = gain[k] * reflect[k, d]
    echo[k, d] *= wp.exp(-wp.float64(2.0) * alpha[k] * depth[d])


@wp.kernel
def log_error(
    echo: wp.array2d(dtype=wp.float64),
    measured: wp.array2d(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    k, d = wp.tid()
    r = wp.log(echo[k, d]) - wp.log(measured[k, d])
    wp.atomic_add(loss, 0, r * r)


@wp.kernel
def sgd_update(w: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    w[i] = w[i] - lr * g[i]


def synth(phantoms, depths, seed):
    rng = np.random.default_rng(seed)
    z = np.linspace(0.5, 6.0, depths)
    reflect = rng.uniform(0.2, 1.0, (phantoms, depths))
    gain = rng.uniform(0.8, 1.4, phantoms)
    alpha = rng.uniform(0.05, 0.25, phantoms)
    meas = gain[:, None] * reflect * np.exp(-2.0 * alpha[:, None] * z[None, :])
    meas *= np.exp(rng.normal(0.0, 0.01, meas.shape))
    return z, reflect, meas


def main():
    ap = argparse.ArgumentParser(description="attenuation and gain calibration on tissue phantoms")
    ap.add_argument("--phantoms", type=int, default=5)
    ap.add_argument("--depths", type=int, default=8)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()

    z, reflect, meas = synth(args.phantoms, args.depths, args.seed)
    depth = wp.array(z, dtype=wp.float64)
    reflect = wp.array(reflect, dtype=wp.float64)
    measured = wp.array(meas, dtype=wp.float64)
    gain = wp.array(np.ones(args.phantoms), dtype=wp.float64, requires_grad=True)
    alpha = wp.array(np.full(args.phantoms, 0.1), dtype=wp.float64, requires_grad=True)
    echo = wp.zeros((args.phantoms, args.depths), dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    shape = (args.phantoms, args.depths)

    tape = wp.Tape()
    for step in range(args.steps):
        loss.zero_()
        with tape:
            wp.launch(echo_model, dim=shape, inputs=[gain, alpha, depth, reflect], outputs=[echo])
            wp.launch(log_error, dim=shape, inputs=[echo, measured], outputs=[loss])
        tape.backward(loss)
        for w in (gain, alpha):
            wp.launch(sgd_update, dim=w.shape[0], inputs=[w, w.grad, wp.float64(args.lr)])
        tape.zero()
        tape.reset()
        if step % 10 == 0:
            print(f"step {step:4d}  loss {loss.numpy()[0]:.6f}")

    print("gain ", gain.numpy())
    print("alpha", alpha.numpy())


if __name__ == "__main__":
    main()
