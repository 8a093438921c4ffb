import warp as wp


@wp.kernel
def claim(active: wp.array(dtype=wp.int32), head: wp.array(dtype=wp.int32), slot: wp.array(dtype=wp.int32)):
    i = wp.tid()
    if active[i] == 0:
        return
    slot[i] = wp.atomic_add(head, 0, 1)


@wp.kernel
def emit(
    active: wp.array(dtype=wp.int32),
    nozzle: wp.array(dtype=wp.vec3d),
    exit_velocity: wp.array(dtype=wp.vec3d),
    slot: wp.array(dtype=wp.int32),
    pos: wp.array(dtype=wp.vec3d),
    vel: wp.array(dtype=wp.vec3d),
    owner: wp.array(dtype=wp.int32),
):
    i = wp.tid()
    if active[i] == 0:
        return
    s = slot[i]
    pos[s] = nozzle[i]
    vel[s] = exit_velocity[i]
    owner[s] = i


@wp.kernel
def fly(
    pos: wp.array(dtype=wp.vec3d),
    vel: wp.array(dtype=wp.vec3d),
    flight_time: wp.float64,
    gravity: wp.vec3d,
    landing: wp.array(dtype=wp.vec3d),
):
    s = wp.tid()
    t = flight_time
    landing[s] = pos[s] + t * vel[s] + wp.float64(0.5) * t * t * gravity


@wp.kernel
def throw_error(
    landing: wp.array(dtype=wp.vec3d),
    owner: wp.array(dtype=wp.int32),
    target: wp.array(dtype=wp.vec3d),
    count: wp.array(dtype=wp.int32),
    loss: wp.array(dtype=wp.float64),
):
    s = wp.tid()
    if s >= count[0]:
        return
    d = landing[s] - target[owner[s]]
    wp.atomic_add(loss, 0, wp.dot(d, d))
