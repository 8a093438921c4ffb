import argparse

import numpy as np
import warp as wp
import warp.optim

from renderer import SPHERES, depth_loss, render_depth


def render(centers, radii, width, pixel):
    depth = wp.zeros(width * width, dtype=wp.float32, requires_grad=True)
    wp.launch(render_depth, dim=width * width, inputs=[centers, radii, width, pixel], outputs=[depth])
    return depth


def scene(seed, count):
    rng = np.random.default_rng(seed)
    c = np.zeros((count, 3), dtype=np.float32)
    c[:, 0] = np.linspace(-1.0, 1.0, count) + rng.uniform(-0.05, 0.05, count)
    c[:, 1] = rng.uniform(-0.3, 0.3, count)
    c[:, 2] = rng.uniform(-0.5, 0.5, count)
    r = rng.uniform(0.3, 0.42, count).astype(np.float32)
    return c, r


def main():
    ap = argparse.ArgumentParser(description="recover sphere radii from a depth image")
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--seed", type=int, default=4)
    args = ap.parse_args()
    pixel = 3.2 / args.width

    c_true, r_true = scene(args.seed, SPHERES)
    centers = wp.array(c_true, dtype=wp.vec3)
    observed = render(centers, wp.array(r_true, dtype=wp.float32), args.width, pixel)
    radii = wp.array(np.full(SPHERES, 0.46, dtype=np.float32), dtype=wp.float32, requires_grad=True)
    opt = warp.optim.Adam([radii], lr=args.lr)

    for it in range(args.iters):
        loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
        tape = wp.Tape()
        with tape:
            depth = render(centers, radii, args.width, pixel)
            wp.launch(depth_loss, dim=depth.shape[0], inputs=[depth, observed], outputs=[loss])
        tape.backward(loss)
        opt.step([radii.grad])
        tape.zero()
        if it % 5 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.4f}  radii {radii.numpy()}")


if __name__ == "__main__":
    main()
