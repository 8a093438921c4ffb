import argparse

import numpy as np
import warp as wp


@wp.kernel
def place_markers(
    radius: wp.array(dtype=wp.float32),
    height: wp.array(dtype=wp.float32),
    angle: wp.array(dtype=wp.float32),
    markers: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    markers[i] = wp.vec3(radius[i] * wp.cos(angle[i]), radius[i] * wp.sin(angle[i]), height[i])


@wp.kernel
def reprojection(
    markers: wp.array(dtype=wp.vec3),
    observed: wp.array(dtype=wp.vec2),
    focal: float,
    cam_z: float,
    loss: wp.array(dtype=wp.float32),
):
    i = wp.tid()
    p = markers[i]
    depth = cam_z - p[2] + p[0] * 0.1
    uv = wp.vec2(focal * p[0] / depth, focal * p[1] / depth)
    d = uv - observed[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def project(pts, focal, cam_z):
    depth = cam_z - pts[:, 2] + pts[:, 0] * 0.1
    return np.stack([focal * pts[:, 0] / depth, focal * pts[:, 1] / depth], axis=1)


def main():
    ap = argparse.ArgumentParser(description="recover marker radii and heights on a ring from one calibrated view")
    ap.add_argument("--markers", type=int, default=8)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=19)
    args = ap.parse_args()
    n = args.markers
    rng = np.random.default_rng(args.seed)
    ang = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False) + rng.uniform(-0.1, 0.1, n)
    r_true = rng.uniform(0.9, 1.1, n)
    h_true = rng.uniform(-0.2, 0.2, n)
    pts = np.stack([r_true * np.cos(ang), r_true * np.sin(ang), h_true], axis=1)
    focal, cam_z = 2.0, 5.0
    obs = project(pts, focal, cam_z) + rng.normal(0.0, 0.002, (n, 2))

    angle = wp.array(ang.astype(np.float32), dtype=wp.float32)
    observed = wp.array(obs.astype(np.float32), dtype=wp.vec2)
    radius = wp.array(np.ones(n, dtype=np.float32), dtype=wp.float32, requires_grad=True)
    height = wp.array(np.zeros(n, dtype=np.float32), dtype=wp.float32, requires_grad=True)
    markers = wp.zeros(n, dtype=wp.vec3, requires_grad=True)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(place_markers, dim=n, inputs=[radius, height, angle], outputs=[markers])
            wp.launch(reprojection, dim=n, inputs=[markers, observed, focal, cam_z], outputs=[loss])
        tape.backward(loss)
        for p in (radius, height):
            p.assign(p.numpy() - args.lr * p.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  reprojection {loss.numpy()[0]:.3e}")
    print("radius", radius.numpy())


if __name__ == "__main__":
    main()
