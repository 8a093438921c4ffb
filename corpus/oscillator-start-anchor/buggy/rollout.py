import warp as wp


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.float64),
    v: wp.array(dtype=wp.float64),
    stiffness: wp.float64,
    damping: wp.float64,
    dt: wp.float64,
    x_next: wp.array(dtype=wp.float64),
    v_next: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    a = -stiffness * x[i] - damping * v[i]
    vn = v[i] + dt * a
    v_next[i] = vn
    x_next[i] = x[i] + dt * vn


def simulate(x0, v0, steps, stiffness, damping, dt):
    device = x0.device
    n = x0.shape[0]
    start = wp.clone(x0)
    x = x0
    v = v0
    for _ in range(steps):
        xn = wp.zeros(n, dtype=wp.float64, device=device, requires_grad=True)
        vn = wp.zeros(n, dtype=wp.float64, device=device, requires_grad=True)
        wp.launch(
            integrate,
            dim=n,
            inputs=[x, v, wp.float64(stiffness), wp.float64(damping), wp.float64(dt)],
            outputs=[xn, vn],
            device=device,
        )
        x = xn
        v = vn
    return start, x
