import warp as wp


@wp.kernel
def advance(
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
    command: wp.array2d(dtype=wp.vec2d),
    step: int,
    gain: wp.array(dtype=wp.float64),
    drag: wp.array(dtype=wp.float64),
    current: wp.array(dtype=wp.vec2d),
    mass: wp.float64,
    dt: wp.float64,
    pos_next: wp.array(dtype=wp.vec2d),
    vel_next: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    v = vel[i]
    rel = v - current[0]
    speed = wp.sqrt(wp.dot(rel, rel))
    force = gain[i] * command[step, i] - drag[i] * speed * rel
    vn = v + dt * force / mass
    vel_next[i] = vn
    pos_next[i] = pos[i] + dt * vn


@wp.kernel
def ping_error(
    pos: wp.array(dtype=wp.vec2d),
    pings: wp.array2d(dtype=wp.vec2d),
    window: int,
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pos[i] - pings[window, i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


def run_window(fleet, window, pos, vel, loss):
    device = fleet.device
    n = fleet.n
    for k in range(fleet.steps_per_window):
        step = window * fleet.steps_per_window + k
        pos_next = wp.zeros(n, dtype=wp.vec2d, device=device, requires_grad=True)
        vel_next = wp.zeros(n, dtype=wp.vec2d, device=device, requires_grad=True)
        wp.launch(
            advance,
            dim=n,
            inputs=[
                pos,
                vel,
                fleet.command,
                step,
                fleet.gain,
                fleet.drag,
                fleet.current,
                wp.float64(fleet.mass),
                wp.float64(fleet.dt),
            ],
            outputs=[pos_next, vel_next],
            device=device,
        )
        pos, vel = pos_next, vel_next
    wp.launch(ping_error, dim=n, inputs=[pos, fleet.pings, window], outputs=[loss], device=device)
    return pos, vel


def initial_state(fleet):
    pos = wp.array(fleet.start, dtype=wp.vec2d, device=fleet.device, requires_grad=True)
    vel = wp.zeros(fleet.n, dtype=wp.vec2d, device=fleet.device, requires_grad=True)
    return pos, vel


def track_loss(fleet):
    pos, vel = initial_state(fleet)
    loss = wp.zeros(1, dtype=wp.float64, device=fleet.device)
    for w in range(fleet.windows):
        pos, vel = run_window(fleet, w, pos, vel, loss)
    return float(loss.numpy()[0])


def accumulate_gradient(fleet):
    pos, vel = initial_state(fleet)
    for w in range(fleet.windows):
        loss = wp.zeros(1, dtype=wp.float64, device=fleet.device, requires_grad=True)
        tape = wp.Tape()
        with tape:
            pos, vel = run_window(fleet, w, pos, vel, loss)
        tape.backward(loss)
