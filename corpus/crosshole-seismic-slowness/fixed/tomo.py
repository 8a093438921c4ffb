import argparse

import numpy as np
import warp as wp

LAYERS = wp.constant(8)


@wp.kernel
def traveltime_residual(
    lengths: wp.array2d(dtype=wp.float64),
    slowness: wp.array(dtype=wp.float64),
    picks: wp.array(dtype=wp.float64),
    r2: wp.array(dtype=wp.float64),
):
    r = wp.tid()
    t = wp.float64(0.0)
    for c in range(LAYERS):
        t += lengths[r, c] * slowness[c]
    d = t - picks[r]
    r2[r] = d * d


@wp.kernel
def roughness(slowness: wp.array(dtype=wp.float64), rough: wp.array(dtype=wp.float64)):
    c = wp.tid()
    d = slowness[c + 1] - slowness[c]
    rough[c] = d * d


def survey(rays, layers, seed):
    rng = np.random.default_rng(seed)
    depth_src = rng.uniform(0.0, 1.0, rays)
    depth_rec = rng.uniform(0.0, 1.0, rays)
    edges = np.linspace(0.0, 1.0, layers + 1)
    lengths = np.zeros((rays, layers))
    for r in range(rays):
        a, b = sorted((depth_src[r], depth_rec[r]))
        total = np.hypot(1.0, b - a)
        for c in range(layers):
            lo, hi = max(a, edges[c]), min(b, edges[c + 1])
            frac = max(hi - lo, 0.0) / max(b - a, 1e-9)
            lengths[r, c] = frac * total
        if b - a < 1e-9:
            lengths[r, min(int(a * layers), layers - 1)] = 1.0
    true_s = 0.5 + 0.2 * np.sin(np.linspace(0.0, 3.0, layers))
    picks = lengths @ true_s + rng.normal(0.0, 0.002, rays)
    return lengths, picks


def main():
    ap = argparse.ArgumentParser(description="layered slowness from crosshole first-arrival picks")
    ap.add_argument("--rays", type=int, default=40)
    ap.add_argument("--smooth", type=float, default=0.1)
    ap.add_argument("--iters", type=int, default=80)
    ap.add_argument("--lr", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=71)
    args = ap.parse_args()
    lengths_np, picks_np = survey(args.rays, LAYERS, args.seed)
    lengths = wp.array(lengths_np, dtype=wp.float64)
    picks = wp.array(picks_np, dtype=wp.float64)
    slowness = wp.array(np.linspace(0.45, 0.6, LAYERS), dtype=wp.float64, requires_grad=True)
    n, m = args.rays, LAYERS - 1
    for it in range(args.iters):
        r2 = wp.zeros(n, dtype=wp.float64, requires_grad=True)
        rough = wp.zeros(m, dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(traveltime_residual, dim=n, inputs=[lengths, slowness, picks], outputs=[r2])
            wp.launch(roughness, dim=m, inputs=[slowness], outputs=[rough])
        tape.backward(grads={r2: wp.full(n, 1.0 / n, dtype=wp.float64), rough: wp.full(m, args.smooth, dtype=wp.float64)})
        slowness.assign(slowness.numpy() - args.lr * slowness.grad.numpy())
        tape.zero()
        objective = r2.numpy().mean() + args.smooth * rough.numpy().sum()
        if it % 10 == 0:
            print(f"iter {it:3d}  objective {objective:.3e}")
    print("slowness", np.round(slowness.numpy(), 3))


if __name__ == "__main__":
    main()
