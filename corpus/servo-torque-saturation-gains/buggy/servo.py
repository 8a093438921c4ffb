import warp as wp

soft_limit_src = """
    double z2 = z * z;
    return z * (27.0 + z2) / (27.0 + 9.0 * z2);
    """


@wp.func_native(soft_limit_src)
def soft_limit(z: wp.float64) -> wp.float64: ...


@wp.kernel
def torque_misfit(
    gain: wp.array(dtype=wp.float64),
    command: wp.array2d(dtype=wp.float64),
    measured: wp.array2d(dtype=wp.float64),
    tau_max: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    j, s = wp.tid()
    z = gain[j] * command[j, s] / tau_max
    tau = tau_max * soft_limit(z)
    d = tau - measured[j, s]
    wp.atomic_add(loss, 0, d * d)
