import warp as wp


@wp.struct
class ChainState:
    x: wp.array(dtype=wp.float64)
    v: wp.array(dtype=wp.float64)


@wp.kernel
def segment_forces(
    state: ChainState,
    rest: wp.array(dtype=wp.float64),
    stiffness: wp.float64,
    force: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    left = wp.float64(0.0)
    if i > 0:
        left = state.x[i - 1]
    stretch = state.x[i] - left - rest[i]
    t = stiffness * (stretch + stretch * stretch * stretch)
    wp.atomic_add(force, i, -t)
    if i > 0:
        wp.atomic_add(force, i - 1, t)


@wp.kernel
def integrate(
    state_in: ChainState,
    force: wp.array(dtype=wp.float64),
    gravity: wp.float64,
    dt: wp.float64,
    state_out: ChainState,
):
    i = wp.tid()
    v = state_in.v[i] + dt * (force[i] + gravity)
    state_out.v[i] = v
    state_out.x[i] = state_in.x[i] + dt * v


@wp.kernel
def depth_misfit(
    state: ChainState,
    target: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = state.x[i] - target[i]
    wp.atomic_add(loss, 0, d * d)
