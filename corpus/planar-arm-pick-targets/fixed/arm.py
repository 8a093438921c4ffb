import warp as wp


@wp.struct
class Links:
    l0: wp.float64
    l1: wp.float64
    l2: wp.float64


@wp.func
def tip_position(links: Links, a: wp.float64, b: wp.float64, c: wp.float64):
    p1 = a
    p2 = a + b
    p3 = a + b + c
    x = links.l0 * wp.cos(p1) + links.l1 * wp.cos(p2) + links.l2 * wp.cos(p3)
    y = links.l0 * wp.sin(p1) + links.l1 * wp.sin(p2) + links.l2 * wp.sin(p3)
    return wp.vec2d(x, y)


@wp.kernel
def forward_kinematics(q: wp.array2d(dtype=wp.float64), links: Links, tips: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    tips[i] = tip_position(links, q[i, 0], q[i, 1], q[i, 2])


@wp.kernel
def reach_cost(
    tips: wp.array(dtype=wp.vec2d),
    goals: wp.array(dtype=wp.vec2d),
    q: wp.array2d(dtype=wp.float64),
    rest: wp.array(dtype=wp.float64),
    w_posture: wp.float64,
    cost: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = tips[i] - goals[i]
    e = wp.dot(d, d)
    for k in range(3):
        r = q[i, k] - rest[k]
        e += w_posture * r * r
    wp.atomic_add(cost, 0, e)
