import warp as wp

import hull

wp.set_module_options({"enable_backward": False})


@wp.kernel(enable_backward=True)
def advance(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    force: wp.array(dtype=wp.float64),
    knot: int,
    mass: wp.float64,
    cd: wp.float64,
    wetted: wp.float64,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.float64),
    v_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    a = (force[knot] - hull.hull_drag(v[i], cd, wetted)) / mass
    v_new = v[i] + dt * a
    v_out[i] = v_new
    x_out[i] = x[i] + dt * v_new


@wp.kernel(enable_backward=True)
def race_loss(
    x: wp.array(dtype=wp.float64),
    force: wp.array(dtype=wp.float64),
    target: wp.float64,
    effort: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    k = wp.tid()
    if k == 0:
        d = x[0] - target
        wp.atomic_add(loss, 0, d * d)
    f = force[k]
    wp.atomic_add(loss, 0, effort * f * f)
