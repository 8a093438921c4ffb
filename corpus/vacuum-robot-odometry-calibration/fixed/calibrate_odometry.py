import argparse

import numpy as np
import warp as wp

from geometry import wrap_angles

STEPS = wp.constant(12)


@wp.kernel
def dead_reckon(
    ticks: wp.array2d(dtype=wp.float64),
    radius: wp.array2d(dtype=wp.float64),
    baseline: wp.array(dtype=wp.float64),
    pose: wp.array(dtype=wp.vec3d),
):
    r = wp.tid()
    x = wp.float64(0.0)
    y = wp.float64(0.0)
    th = wp.float64(0.0)
    for s in range(STEPS):
        dl = radius[r, 0] * ticks[r, 2 * s]
        dr = radius[r, 1] * ticks[r, 2 * s + 1]
        ds = wp.float64(0.5) * (dl + dr)
        th = th + (dr - dl) / baseline[r]
        x = x + ds * wp.cos(th)
        y = y + ds * wp.sin(th)
    pose[r] = wp.vec3d(x, y, th)


@wp.kernel
def heading_of(pose: wp.array(dtype=wp.vec3d), gt: wp.array(dtype=wp.vec3d), dth: wp.array(dtype=wp.float64)):
    r = wp.tid()
    dth[r] = pose[r][2] - gt[r][2]


@wp.kernel
def pose_error(pose: wp.array(dtype=wp.vec3d), gt: wp.array(dtype=wp.vec3d), dth: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    r = wp.tid()
    dx = pose[r][0] - gt[r][0]
    dy = pose[r][1] - gt[r][1]
    wp.atomic_add(loss, 0, dx * dx + dy * dy + wp.float64(4.0) * dth[r] * dth[r])


def odometry_loss(ticks, radius, baseline, gt):
    n = baseline.shape[0]
    pose = wp.zeros(n, dtype=wp.vec3d, requires_grad=True)
    dth = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    wrapped = wp.zeros(n, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    wp.launch(dead_reckon, dim=n, inputs=[ticks, radius, baseline], outputs=[pose])
    wp.launch(heading_of, dim=n, inputs=[pose, gt], outputs=[dth])
    wp.launch(wrap_angles, dim=n, inputs=[dth], outputs=[wrapped])
    wp.launch(pose_error, dim=n, inputs=[pose, gt, wrapped], outputs=[loss])
    return loss


def fleet_logs(robots, seed):
    rng = np.random.default_rng(seed)
    steps = int(STEPS)
    ticks = rng.uniform(0.5, 1.5, (robots, 2 * steps))
    radius = np.stack([rng.uniform(0.032, 0.036, robots), rng.uniform(0.032, 0.036, robots)], 1)
    base = rng.uniform(0.22, 0.26, robots)
    gt = np.zeros((robots, 3))
    for r in range(robots):
        x = y = th = 0.0
        for s in range(steps):
            dl, dr = radius[r, 0] * ticks[r, 2 * s], radius[r, 1] * ticks[r, 2 * s + 1]
            ds = 0.5 * (dl + dr)
            th += (dr - dl) / base[r]
            x += ds * np.cos(th)
            y += ds * np.sin(th)
        gt[r] = (x, y, th)
    return ticks, gt


def main():
    ap = argparse.ArgumentParser(description="calibrate wheel radii and track width of a robot-vacuum fleet")
    ap.add_argument("--robots", type=int, default=4)
    ap.add_argument("--iters", type=int, default=60)
    ap.add_argument("--lr", type=float, default=1e-5)
    ap.add_argument("--seed", type=int, default=3)
    args = ap.parse_args()
    ticks_np, gt_np = fleet_logs(args.robots, args.seed)
    ticks = wp.array(ticks_np, dtype=wp.float64)
    gt = wp.array(gt_np, dtype=wp.vec3d)
    radius = wp.array(np.full((args.robots, 2), 0.034), dtype=wp.float64, requires_grad=True)
    baseline = wp.array(np.full(args.robots, 0.24), dtype=wp.float64, requires_grad=True)
    for it in range(args.iters):
        tape = wp.Tape()
        with tape:
            loss = odometry_loss(ticks, radius, baseline, gt)
        tape.backward(loss)
        for p in (radius, baseline):
            p.assign(p.numpy() - args.lr * p.grad.numpy())
        tape.zero()
        if it % 10 == 0:
            print(f"iter {it:3d}  loss {loss.numpy()[0]:.6e}")
    print("radii", np.round(radius.numpy(), 5))


if __name__ == "__main__":
    main()
