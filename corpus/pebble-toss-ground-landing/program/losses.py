import warp as wp


@wp.kernel
def landing_error(q: wp.array(dtype=wp.vec2d), goal: wp.array(dtype=wp.vec2d), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = q[i] - goal[i]
    wp.atomic_add(out, 0, d[0] * d[0] + wp.float64(4.0) * d[1] * d[1])


def landing_loss(q, goal):
    out = wp.zeros(1, dtype=wp.float64, device=q.device, requires_grad=True)
    wp.launch(landing_error, dim=q.shape[0], inputs=[q, goal], outputs=[out], device=q.device)
    return out
