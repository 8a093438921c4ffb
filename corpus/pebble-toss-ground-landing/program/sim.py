import warp as wp


@wp.kernel
def integrate_balls(
    q: wp.array(dtype=wp.vec2d),
    qd: wp.array(dtype=wp.vec2d),
    radius: wp.float64,
    k_ground: wp.float64,
    c_ground: wp.float64,
    g: wp.float64,
    dt: wp.float64,
    q_new: wp.array(dtype=wp.vec2d),
    qd_new: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    p = q[i]
    v = qd[i]
    fy = -g
    pen = radius - p[1]
    if pen > wp.float64(0.0):
        fy = fy + pen * (k_ground - c_ground * v[1])
    v1 = wp.vec2d(v[0] * wp.float64(0.9995), v[1] + dt * fy)
    qd_new[i] = v1
    q_new[i] = p + dt * v1


def simulate(q0, qd0, steps, dt, radius=0.05, k_ground=4.0e3, c_ground=30.0, g=9.81, keep=None):
    q, qd = q0, qd0
    for _ in range(steps):
        q1 = wp.empty_like(q0, requires_grad=True)
        qd1 = wp.empty_like(q0, requires_grad=True)
        wp.launch(
            integrate_balls,
            dim=q0.shape[0],
            inputs=[q, qd, wp.float64(radius), wp.float64(k_ground), wp.float64(c_ground), wp.float64(g), wp.float64(dt)],
            outputs=[q1, qd1],
            device=q0.device,
        )
        if keep is not None:
            keep.append(q1)
        q, qd = q1, qd1
    return q, qd
