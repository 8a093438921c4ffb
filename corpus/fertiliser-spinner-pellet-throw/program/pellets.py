import warp as wp


@wp.kernel
def flight_step(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    drag: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec3d),
    v_out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    vi = v[i]
    acc = wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(-9.81)) - drag * wp.length(vi) * vi
    vn = vi + dt * acc
    v_out[i] = vn
    x_out[i] = x[i] + dt * vn


@wp.kernel
def housekeeping(
    x: wp.array(dtype=wp.vec3d),
    lo: wp.vec3d,
    hi: wp.vec3d,
    cursor: wp.vec3d,
    airborne: wp.array(dtype=wp.int32),
    out_of_field: wp.array(dtype=wp.int32),
    picked: wp.array(dtype=wp.int32),
):
    i = wp.tid()
    p = x[i]
    if p[2] > wp.float64(0.0):
        wp.atomic_add(airborne, 0, 1)
    outside = 0
    for c in range(3):
        if p[c] < lo[c] or p[c] > hi[c]:
            outside = 1
    out_of_field[i] = outside
    key = int(wp.length(p - cursor) * wp.float64(1000.0)) * 1024 + i
    wp.atomic_min(picked, 0, key)


@wp.kernel
def landing_error(x: wp.array(dtype=wp.vec3d), target: wp.array(dtype=wp.vec3d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, d[0] * d[0] + d[1] * d[1])
