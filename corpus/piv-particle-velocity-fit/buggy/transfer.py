import warp as wp


@wp.kernel
def scatter(
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
    mass: wp.array(dtype=wp.float64),
    res: int,
    cell_size: wp.float64,
    radius: wp.float64,
    momentum: wp.array(dtype=wp.vec2d),
    grid_mass: wp.array(dtype=wp.float64),
):
    p, c = wp.tid()
    cx = c % res
    cy = c // res
    center = wp.vec2d((wp.float64(cx) + wp.float64(0.5)) * cell_size, (wp.float64(cy) + wp.float64(0.5)) * cell_size)
    d = pos[p] - center
    w = wp.exp(-wp.dot(d, d) / (radius * radius))
    wp.atomic_add(momentum, c, w * mass[p] * vel[p])
    wp.atomic_add(grid_mass, c, w * mass[p])


@wp.kernel
def to_velocity(momentum: wp.array(dtype=wp.vec2d), grid_mass: wp.array(dtype=wp.float64)):
    c = wp.tid()
    momentum[c] /= grid_mass[c]


def particles_to_grid(pos, vel, mass, res, cell_size, radius):
    device = pos.device
    n = pos.shape[0]
    cells = res * res
    momentum = wp.zeros(cells, dtype=wp.vec2d, device=device, requires_grad=True)
    grid_mass = wp.zeros(cells, dtype=wp.float64, device=device, requires_grad=True)
    wp.launch(
        scatter,
        dim=(n, cells),
        inputs=[pos, vel, mass, res, wp.float64(cell_size), wp.float64(radius)],
        outputs=[momentum, grid_mass],
        device=device,
    )
    wp.launch(to_velocity, dim=cells, inputs=[momentum, grid_mass], device=device)
    return momentum
