import argparse

import numpy as np
import warp as wp


@wp.kernel
def detect_dents(
    depth: wp.array(dtype=wp.float64),
    pad: wp.array(dtype=wp.int32),
    gain: wp.array(dtype=wp.float64),
    threshold: wp.float64,
    count: wp.array(dtype=wp.int32),
    ids: wp.array(dtype=wp.int32),
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = depth[i]
    if d > threshold:
        slot = wp.atomic_add(count, 0, 1)
        ids[slot] = i
        energy[slot] = gain[pad[i]] * d * d


@wp.kernel
def energy_error(
    energy: wp.array(dtype=wp.float64),
    ids: wp.array(dtype=wp.int32),
    count: wp.array(dtype=wp.int32),
    reference: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    s = wp.tid()
    if s < count[0]:
        e = energy[s] - reference[ids[s]]
        wp.atomic_add(loss, 0, e * e)


def calibration_loss(gain, depth, pad, reference, threshold):
    n = depth.shape[0]
    count = wp.zeros(1, dtype=wp.int32)
    ids = wp.zeros(n, dtype=wp.int32)
    energy = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(detect_dents, dim=n, inputs=[depth, pad, gain, wp.float64(threshold)], outputs=[count, ids, energy])
    wp.launch(energy_error, dim=n, inputs=[energy, ids, count, reference], outputs=[loss])
    return loss


def field_campaign(pads, dents, seed):
    rng = np.random.default_rng(seed)
    depth = rng.uniform(0.0, 2.0, dents)
    pad = rng.integers(0, pads, dents).astype(np.int32)
    true_gain = rng.uniform(0.8, 1.6, pads)
    reference = true_gain[pad] * depth**2 * rng.lognormal(0.0, 0.03, dents)
    return depth, pad, reference


def main():
    ap = argparse.ArgumentParser(description="calibrate hail-pad energy gains against a disdrometer")
    ap.add_argument("--pads", type=int, default=4)
    ap.add_argument("--dents", type=int, default=24)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=61)
    args = ap.parse_args()
    depth_np, pad_np, ref_np = field_campaign(args.pads, args.dents, args.seed)
    depth = wp.array(depth_np, dtype=wp.float64)
    pad = wp.array(pad_np, dtype=wp.int32)
    reference = wp.array(ref_np, dtype=wp.float64)
    gain = wp.array(np.ones(args.pads), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = calibration_loss(gain, depth, pad, reference, args.threshold)
        tape.backward(loss)
        gain.assign(gain.numpy() - args.lr * gain.grad.numpy())
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.5f}")
    print("gains", np.round(gain.numpy(), 3))


if __name__ == "__main__":
    main()
