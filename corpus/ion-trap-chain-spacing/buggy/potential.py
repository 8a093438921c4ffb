import warp as wp


@wp.kernel
def chain_energy(
    z: wp.array(dtype=wp.float64),
    n_ion: int,
    electrode_z: wp.array(dtype=wp.float64),
    electrode_v: wp.array(dtype=wp.float64),
    n_electrode: int,
    soft: wp.float64,
    energy: wp.array(dtype=wp.float64),
):
    total = wp.float64(0.0)
    for i in range(n_ion):
        for j in range(n_ion):
            d = z[i] - z[j]
            e = wp.float64(0.5) / wp.sqrt(d * d + soft)
            total += e
        for k in range(n_electrode):
            d = z[i] - electrode_z[k]
            e = electrode_v[k] * d * d
            total += e
    energy[0] = total
