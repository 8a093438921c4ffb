import warp as wp


@wp.kernel
def pool_step(
    level: wp.array(dtype=wp.float64),
    gate: wp.array(dtype=wp.float64),
    inflow: wp.float64,
    area: wp.float64,
    dt: wp.float64,
    level_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    upstream = inflow
    if i > 0:
        upstream = gate[i - 1] * wp.sqrt(level[i - 1])
    out = gate[i] * wp.sqrt(level[i])
    level_out[i] = level[i] + dt * (upstream - out) / area


@wp.kernel
def level_misfit(level: wp.array(dtype=wp.float64), target: wp.float64, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = level[i] - target
    wp.atomic_add(out, 0, d * d)


@wp.kernel
def gate_smoothness(gate: wp.array(dtype=wp.float64), weight: wp.float64, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    if i > 0:
        d = gate[i] - gate[i - 1]
        wp.atomic_add(out, 0, weight * d * d)


def simulate(gate, pools, steps):
    level = wp.array([1.0] * pools, dtype=wp.float64, requires_grad=True)
    for _ in range(steps):
        nxt = wp.zeros(pools, dtype=wp.float64, requires_grad=True)
        wp.launch(pool_step, dim=pools, inputs=[level, gate, wp.float64(0.5), wp.float64(2.0), wp.float64(0.2)],
                  outputs=[nxt])
        level = nxt
    return level
