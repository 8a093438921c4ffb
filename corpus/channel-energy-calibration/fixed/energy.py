import warp as wp

SAMPLES = 8


@wp.kernel
def channel_energy(gain: wp.array2d(dtype=wp.float64), energy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    g = wp.tile_load(gain[i], shape=SAMPLES)
    sq = wp.tile_map(wp.mul, g, g)
    total = wp.tile_sum(sq)
    wp.tile_store(energy, total, offset=i)


@wp.kernel
def misfit(energy: wp.array(dtype=wp.float64), target: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = energy[i] - target[i]
    wp.atomic_add(loss, 0, d * d)
