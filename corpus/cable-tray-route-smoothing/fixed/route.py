import argparse

import numpy as np
import warp as wp


@wp.kernel
def route_energy(
    pts: wp.array(dtype=wp.vec3d),
    anchors: wp.array(dtype=wp.vec3d),
    tension: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    a = pts[i] - anchors[i]
    e = wp.dot(a, a)
    if i + 1 < pts.shape[0]:
        d = pts[i + 1] - pts[i]
        e = e + tension * wp.length(d)
    wp.atomic_add(energy, 0, e)


class CableRouter:
    def __init__(self, n, grid, seed, tension):
        rng = np.random.default_rng(seed)
        s = np.linspace(0.0, 1.0, n)
        anchors = np.stack([4.0 * s, 1.5 * np.sin(3.0 * s), 0.5 * s * s], axis=1)
        anchors += rng.normal(0.0, 0.05, anchors.shape)
        start = np.round(anchors / grid) * grid
        self.anchors = wp.array(anchors, dtype=wp.vec3d)
        self.pts = wp.array(start, dtype=wp.vec3d, requires_grad=True)
        self.tension = tension

    def energy(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(route_energy, dim=self.pts.shape[0], inputs=[self.pts, self.anchors, wp.float64(self.tension)], outputs=[out])
        return out

    def descend(self, lr):
        tape = wp.Tape()
        with tape:
            e = self.energy()
        tape.backward(e)
        self.pts.assign(self.pts.numpy() - lr * self.pts.grad.numpy())
        tape.zero()
        return e.numpy()[0]


def main():
    ap = argparse.ArgumentParser(description="smooth a cable route between tray anchors")
    ap.add_argument("--points", type=int, default=10)
    ap.add_argument("--grid", type=float, default=0.5)
    ap.add_argument("--tension", type=float, default=0.3)
    ap.add_argument("--iters", type=int, default=25)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args()
    router = CableRouter(args.points, args.grid, args.seed, args.tension)
    for it in range(args.iters):
        e = router.descend(args.lr)
        if it % 5 == 0:
            print(f"iter {it:3d}  energy {e:.5f}")
    np.savetxt("route.txt", router.pts.numpy())


if __name__ == "__main__":
    main()
