import warp as wp


@wp.kernel
def closed_loop_step(
    pos: wp.array(dtype=float),
    vel: wp.array(dtype=float),
    kp: wp.array(dtype=float),
    kd: wp.array(dtype=float),
    goal: wp.array(dtype=float),
    friction: wp.array(dtype=float),
    dt: float,
    effort_weight: float,
    pos_out: wp.array(dtype=float),
    vel_out: wp.array(dtype=float),
    running: wp.array(dtype=float),
):
    i = wp.tid()
    e = pos[i] - goal[i]
    u = -kp[i] * e - kd[i] * vel[i]
    a = u - friction[i] * vel[i]
    v = vel[i] + dt * a
    vel_out[i] = v
    pos_out[i] = pos[i] + dt * v
    wp.atomic_add(running, i, dt * (e * e + effort_weight * u * u))


@wp.kernel
def episode_cost(
    pos: wp.array(dtype=float),
    vel: wp.array(dtype=float),
    goal: wp.array(dtype=float),
    running: wp.array(dtype=float),
    terminal_weight: float,
    cost: wp.array(dtype=float),
):
    i = wp.tid()
    e = pos[i] - goal[i]
    cost[i] = running[i] + terminal_weight * (e * e + vel[i] * vel[i])
