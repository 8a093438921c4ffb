import warp as wp

JOINTS = wp.constant(4)


@wp.kernel
def soft_limits(q: wp.array2d(dtype=float), limit: float, theta: wp.array2d(dtype=float)):
    a, j = wp.tid()
    theta[a, j] = limit * wp.tanh(q[a, j] / limit)


@wp.kernel
def forward_kinematics(theta: wp.array2d(dtype=float), lengths: wp.array(dtype=float), tips: wp.array(dtype=wp.vec2)):
    a = wp.tid()
    p = wp.vec2(0.0, 0.0)
    phi = float(0.0)
    for j in range(JOINTS):
        phi = phi + theta[a, j]
        p = p + lengths[j] * wp.vec2(wp.cos(phi), wp.sin(phi))
    tips[a] = p


@wp.kernel
def reach_cost(
    tips: wp.array(dtype=wp.vec2),
    goals: wp.array(dtype=wp.vec2),
    q: wp.array2d(dtype=float),
    posture: float,
    cost: wp.array(dtype=float),
):
    a = wp.tid()
    e = tips[a] - goals[a]
    c = wp.dot(e, e)
    for j in range(JOINTS):
        c = c + posture * q[a, j] * q[a, j]
    wp.atomic_add(cost, 0, c)
