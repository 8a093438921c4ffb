import warp as wp


@wp.kernel
def drift(
    pos_in: wp.array(dtype=wp.vec2d),
    gust: wp.array(dtype=wp.float64),
    step: int,
    wind: wp.vec2d,
    dt: wp.float64,
    seed: int,
    pos_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    state = wp.rand_init(seed, step * 4096 + i)
    kx = wp.float64(wp.randn(state))
    ky = wp.float64(wp.randn(state))
    pos_out[i] = pos_in[i] + dt * (wind + gust[i] * wp.vec2d(kx, ky))


@wp.kernel
def spread(pos: wp.array(dtype=wp.vec2d), target: wp.array(dtype=wp.vec2d), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = pos[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def release(start, gust, target, steps, wind, dt, seed, device):
    pos = start
    for step in range(steps):
        nxt = wp.zeros_like(start, requires_grad=True)
        wp.launch(drift, dim=start.shape[0], inputs=[pos, gust, step, wind, dt, seed], outputs=[nxt], device=device)
        pos = nxt
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=device)
    wp.launch(spread, dim=start.shape[0], inputs=[pos, target], outputs=[loss], device=device)
    return loss
