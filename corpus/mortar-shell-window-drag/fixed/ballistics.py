import warp as wp


@wp.kernel
def flight_step(
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
    coef: wp.array(dtype=wp.float64),
    dt: wp.float64,
    pos_out: wp.array(dtype=wp.vec2d),
    vel_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    air = vel[i] - wp.vec2d(coef[1], wp.float64(0.0))
    speed = wp.length(air)
    acc = wp.vec2d(wp.float64(0.0), wp.float64(-9.81)) - coef[0] * speed * air
    v = vel[i] + dt * acc
    vel_out[i] = v
    pos_out[i] = pos[i] + dt * v


@wp.kernel
def track_misfit(pos: wp.array(dtype=wp.vec2d), radar: wp.array(dtype=wp.vec2d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = pos[i] - radar[i]
    wp.atomic_add(out, 0, wp.dot(d, d))


def fly(pos, vel, coef, steps, dt):
    for _ in range(steps):
        p = wp.zeros(pos.shape[0], dtype=wp.vec2d, requires_grad=True)
        v = wp.zeros(vel.shape[0], dtype=wp.vec2d, requires_grad=True)
        wp.launch(flight_step, dim=pos.shape[0], inputs=[pos, vel, coef, wp.float64(dt)], outputs=[p, v])
        pos, vel = p, v
    return pos, vel
