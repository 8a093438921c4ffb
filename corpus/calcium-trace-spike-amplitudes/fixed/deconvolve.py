import argparse

import numpy as np
import warp as wp


@wp.kernel
def fluorescence(
    amp: wp.array(dtype=wp.float64),
    onsets: wp.array(dtype=wp.float64),
    baseline: wp.array(dtype=wp.float64),
    tau: wp.float64,
    dt: wp.float64,
    trace: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    time = wp.float64(t) * dt
    f = baseline[0]
    for k in range(amp.shape[0]):
        s = time - onsets[k]
        if s >= wp.float64(0.0):
            f = f + amp[k] * wp.exp(-s / tau)
    trace[t] = f


@wp.kernel
def objective_terms(
    trace: wp.array(dtype=wp.float64),
    recorded: wp.array(dtype=wp.float64),
    amp: wp.array(dtype=wp.float64),
    sparsity: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    d = trace[t] - recorded[t]
    wp.atomic_add(loss, 0, d * d)
    if t < amp.shape[0]:
        wp.atomic_add(loss, 0, sparsity * wp.abs(amp[t]))


def total_loss(amp, onsets, baseline, recorded, tau, dt, sparsity):
    n = recorded.shape[0]
    trace = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(fluorescence, dim=n, inputs=[amp, onsets, baseline, wp.float64(tau), wp.float64(dt)], outputs=[trace])
    wp.launch(objective_terms, dim=n, inputs=[trace, recorded, amp, wp.float64(sparsity)], outputs=[loss])
    return loss


def synthetic_cell(samples, candidates, dt, tau, seed):
    rng = np.random.default_rng(seed)
    onsets = np.sort(rng.uniform(0.0, samples * dt * 0.8, candidates))
    true_amp = np.where(rng.random(candidates) < 0.5, rng.uniform(0.5, 1.5, candidates), 0.0)
    time = np.arange(samples) * dt
    s = time[:, None] - onsets[None, :]
    trace = 0.2 + (true_amp[None, :] * np.where(s >= 0.0, np.exp(-np.maximum(s, 0.0) / tau), 0.0)).sum(1)
    return onsets, trace + rng.normal(0.0, 0.03, samples)


def main():
    ap = argparse.ArgumentParser(description="sparse spike amplitudes from a calcium fluorescence trace")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--candidates", type=int, default=6)
    ap.add_argument("--sparsity", type=float, default=0.05)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=23)
    args = ap.parse_args()
    dt, tau = 0.1, 0.6

    onsets_np, rec_np = synthetic_cell(args.samples, args.candidates, dt, tau, args.seed)
    onsets = wp.array(onsets_np, dtype=wp.float64)
    recorded = wp.array(rec_np, dtype=wp.float64)
    amp = wp.array(np.full(args.candidates, 0.1), dtype=wp.float64, requires_grad=True)
    baseline = wp.array([float(np.median(rec_np))], dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = total_loss(amp, onsets, baseline, recorded, tau, dt, args.sparsity)
        tape.backward(loss)
        for p in (amp, baseline):
            p.assign(p.numpy() - args.lr * p.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.5f}")
    print("amplitudes", np.round(amp.numpy(), 3))


if __name__ == "__main__":
    main()
