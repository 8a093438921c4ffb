"""Fit per-layer opacities of a stack of coloured films (front-to-back compositing) to observed pixels.

Opacities are stored unconstrained and clamped to [0, 1] in the forward pass."""
import numpy as np
import warp as wp

LAYERS = 5
PIXELS = 16


@wp.kernel
def composite(raw: wp.array(dtype=float), color: wp.array2d(dtype=float), coverage: wp.array2d(dtype=float),
              out: wp.array(dtype=float)):
    p = wp.tid()
    trans = float(1.0)
    c = float(0.0)
    for k in range(LAYERS):
        a = wp.clamp(raw[k], 0.0, 1.0) * coverage[p, k]
        c = c + trans * a * color[p, k]
        trans = trans * (1.0 - a)
    out[p] = c + trans * 0.2


@wp.kernel
def pixel_loss(out: wp.array(dtype=float), obs: wp.array(dtype=float), loss: wp.array(dtype=float)):
    p = wp.tid()
    d = out[p] - obs[p]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def sgd(raw: wp.array(dtype=float), g: wp.array(dtype=float), lr: float):
    k = wp.tid()
    raw[k] = raw[k] - lr * g[k]


def scene():
    rng = np.random.default_rng(13)
    color = rng.uniform(0.3, 1.0, (PIXELS, LAYERS))
    coverage = (rng.uniform(0, 1, (PIXELS, LAYERS)) > 0.4).astype(np.float64)
    return color, coverage


def render_np(raw, color, coverage):
    out = np.zeros(PIXELS)
    for p in range(PIXELS):
        tr, c = 1.0, 0.0
        for k in range(LAYERS):
            a = np.clip(raw[k], 0, 1) * coverage[p, k]
            c += tr * a * color[p, k]
            tr *= 1 - a
        out[p] = c + tr * 0.2
    return out


A_TRUE = np.array([1.0, 0.4, 1.0, 0.25, 0.6])


def main(iters=30, lr=0.5):
    color_np, cov_np = scene()
    color = wp.array(color_np, dtype=float)
    coverage = wp.array(cov_np, dtype=float)
    obs = wp.array(render_np(A_TRUE, color_np, cov_np) + 0.03, dtype=float)
    raw = wp.array(np.full(LAYERS, 0.7), dtype=float, requires_grad=True)
    for it in range(iters):
        out = wp.zeros(PIXELS, dtype=float, requires_grad=True)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(composite, dim=PIXELS, inputs=[raw, color, coverage], outputs=[out])
            wp.launch(pixel_loss, dim=PIXELS, inputs=[out, obs], outputs=[loss])
        tape.backward(loss)
        wp.launch(sgd, dim=LAYERS, inputs=[raw, raw.grad, lr])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d} loss {loss.numpy()[0]:.6f} raw {np.round(raw.numpy(), 3)}")


if __name__ == "__main__":
    main()
