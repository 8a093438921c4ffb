import warp as wp


@wp.struct
class Lame:
    mu: wp.float64
    lam: wp.float64


@wp.func
def strain_energy(m: Lame, e: wp.vec3d):
    tr = e[0] + e[1] + e[2]
    return m.mu * wp.dot(e, e) + wp.float64(0.5) * m.lam * tr * tr


@wp.kernel
def mount_energy(
    mu: wp.array(dtype=wp.float64),
    lam: wp.array(dtype=wp.float64),
    strain: wp.array(dtype=wp.vec3d),
    measured: wp.array(dtype=wp.float64),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    m = Lame(mu[i], lam[i])
    d = strain_energy(m, strain[i]) - measured[i]
    wp.atomic_add(loss, 0, d * d)
