import warp as wp

GRAVITY = 9.81


@wp.kernel
def integrate_buoys(
    x: wp.array(dtype=wp.vec3),
    v: wp.array(dtype=wp.vec3),
    mass: wp.array(dtype=float),
    drag: wp.array(dtype=float),
    area: wp.array(dtype=float),
    current: wp.vec3,
    level: float,
    heave_damping: float,
    dt: float,
    x_out: wp.array(dtype=wp.vec3),
    v_out: wp.array(dtype=wp.vec3),
):
    i = wp.tid()
    p = x[i]
    u = v[i]
    m = mass[i]
    fy = -m * GRAVITY + 1000.0 * GRAVITY * area[i] * (level - p[1]) - heave_damping * u[1]
    f = wp.vec3(0.0, fy, 0.0)
    f = f + drag[i] * (current - u)
    u = u + dt * f / m
    v_out[i] = u
    x_out[i] = p + dt * u


@wp.kernel
def track_error(
    x: wp.array(dtype=wp.vec3),
    observed: wp.array(dtype=wp.vec3),
    loss: wp.array(dtype=float),
):
    i = wp.tid()
    e = x[i] - observed[i]
    wp.atomic_add(loss, 0, wp.dot(e, e))
