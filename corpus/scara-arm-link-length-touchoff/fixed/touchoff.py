import argparse

import numpy as np
import warp as wp


@wp.kernel
def reach_energy(
    q: wp.array(dtype=wp.float64),
    links: wp.array(dtype=wp.float64),
    target: wp.vec2d,
    qref: wp.vec2d,
    prior: wp.float64,
    out: wp.array(dtype=wp.float64),
):
    a = q[0]
    b = q[0] + q[1]
    tip = wp.vec2d(links[0] * wp.cos(a) + links[1] * wp.cos(b), links[0] * wp.sin(a) + links[1] * wp.sin(b))
    d = tip - target
    r = wp.vec2d(q[0], q[1]) - qref
    wp.atomic_add(out, 0, wp.dot(d, d) + prior * wp.dot(r, r))


@wp.kernel
def joint_descent(q: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), step: wp.float64):
    i = wp.tid()
    q[i] = q[i] - step * g[i]


@wp.kernel
def link_update(links: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.float64), lr: wp.float64):
    i = wp.tid()
    links[i] = links[i] - lr * g[i]


def settle(q, links, target, qref, prior, iters, step):
    for _ in range(iters):
        tape = wp.Tape()
        with tape:
            e = wp.zeros(1, dtype=wp.float64, requires_grad=True)
            wp.launch(reach_energy, dim=1, inputs=[q, links, target, qref, prior], outputs=[e])
        tape.backward(e)
        wp.launch(joint_descent, dim=2, inputs=[q, q.grad, step])
        tape.zero()


def main():
    parser = argparse.ArgumentParser(description="calibrate SCARA link lengths from fixture touch-off points")
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--inner", type=int, default=120)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    fixtures = [wp.vec2d(1.1, 0.9), wp.vec2d(0.2, 1.5), wp.vec2d(-0.7, 1.0)]
    readings = [wp.vec2d(0.25, 1.2), wp.vec2d(0.95, 1.0), wp.vec2d(1.6, 1.1)]
    prior = wp.float64(1.0)
    step = wp.float64(0.12)
    links = wp.array([0.8, 0.8], dtype=wp.float64, requires_grad=True)
    joints = wp.array([0.5, 1.0], dtype=wp.float64, requires_grad=True)

    for it in range(args.iters):
        tape = wp.Tape()
        total = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        for f, r in zip(fixtures, readings):
            q = wp.clone(joints)
            settle(q, links, f, r, prior, args.inner, step)
            with tape:
                wp.launch(reach_energy, dim=1, inputs=[q, links, f, r, prior], outputs=[total])
        tape.backward(total)
        wp.launch(link_update, dim=2, inputs=[links, links.grad, wp.float64(args.lr)])
        tape.zero()
        if it % 5 == 0:
            print(f"it {it}: touch-off residual {total.numpy()[0]:.6f}  links {links.numpy()}")


if __name__ == "__main__":
    main()
