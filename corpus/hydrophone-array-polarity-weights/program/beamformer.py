import argparse

import numpy as np
import warp as wp


@wp.func
def polarity(w: wp.float64):
    p = wp.float64(1.0)
    if w < wp.float64(0.0):
        p = wp.float64(-1.0)
    return p


@wp.func_grad(polarity)
def adj_polarity(w: wp.float64, adj_ret: wp.float64):
    if wp.abs(w) <= wp.float64(1.0):
        wp.adjoint[w] += adj_ret


@wp.kernel
def beam_sum(
    latent: wp.array(dtype=wp.float64),
    snapshots: wp.array2d(dtype=wp.float64),
    y: wp.array(dtype=wp.float64),
):
    i, j = wp.tid()
    wp.atomic_add(y, i, polarity(latent[j]) * snapshots[i, j])


@wp.kernel
def beam_error(
    y: wp.array(dtype=wp.float64),
    wanted: wp.array(dtype=wp.float64),
    scale: wp.float64,
    w: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = scale * y[i] - wanted[i]
    wp.atomic_add(loss, 0, w * d * d)


@wp.kernel
def weight_decay(latent: wp.array(dtype=wp.float64), lam: wp.float64, loss: wp.array(dtype=wp.float64)):
    j = wp.tid()
    wp.atomic_add(loss, 0, lam * latent[j] * latent[j])


@wp.kernel
def sgd(latent: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    j = wp.tid()
    latent[j] = latent[j] - lr * g[j]


def main():
    parser = argparse.ArgumentParser(description="learn +/-1 polarity taps of a hydrophone array (binary weights)")
    parser.add_argument("--phones", type=int, default=8)
    parser.add_argument("--snapshots", type=int, default=32)
    parser.add_argument("--iters", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    rng = np.random.default_rng(5)
    snaps = rng.normal(0.0, 1.0, (args.snapshots, args.phones))
    truth = np.where(np.arange(args.phones) % 3 == 0, -1.0, 1.0)
    wanted = wp.array(0.25 * snaps @ truth, dtype=wp.float64)
    x = wp.array(snaps, dtype=wp.float64)
    latent = wp.array(rng.uniform(-0.5, 0.5, args.phones) + 0.013, dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            y = wp.zeros(args.snapshots, dtype=wp.float64, requires_grad=True)
            wp.launch(beam_sum, dim=(args.snapshots, args.phones), inputs=[latent, x], outputs=[y])
            wp.launch(beam_error, dim=args.snapshots,
                      inputs=[y, wanted, wp.float64(0.25), wp.float64(1.0 / args.snapshots)], outputs=[loss])
            wp.launch(weight_decay, dim=args.phones, inputs=[latent, wp.float64(1e-3)], outputs=[loss])
        tape.backward(loss)
        wp.launch(sgd, dim=args.phones, inputs=[latent, latent.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 10 == 0:
            print(f"it {it}: beam loss {loss.numpy()[0]:.5f}  signs {np.sign(latent.numpy()).astype(int)}")


if __name__ == "__main__":
    main()
