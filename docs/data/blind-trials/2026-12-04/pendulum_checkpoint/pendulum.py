import warp as wp


@wp.kernel
def swing(th: wp.array(dtype=float), om: wp.array(dtype=float), length: wp.array(dtype=float),
          damping: float, dt: float, th_out: wp.array(dtype=float), om_out: wp.array(dtype=float)):
    i = wp.tid()
    acc = -9.81 / length[i] * wp.sin(th[i]) - damping * om[i]
    w = om[i] + dt * acc
    om_out[i] = w
    th_out[i] = th[i] + dt * w


@wp.kernel
def angle_error(th: wp.array(dtype=float), target: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = th[i] - target[i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def descend(p: wp.array(dtype=float), g: wp.array(dtype=float), lr: float, lo: float):
    i = wp.tid()
    p[i] = wp.max(p[i] - lr * g[i], lo)
