import warp as wp


@wp.func
def conductivity(t: float, k0: float, beta: float):
    return k0 * (1.0 + beta * t * t)


@wp.kernel
def diffuse(
    temp: wp.array2d(dtype=float),
    power: wp.array2d(dtype=float),
    k0: float,
    beta: float,
    dt: float,
    out: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    n = temp.shape[0]
    m = temp.shape[1]
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        out[i, j] = 0.0
        return
    c = temp[i, j]
    kc = conductivity(c, k0, beta)
    flux = 0.0
    flux += 0.5 * (kc + conductivity(temp[i + 1, j], k0, beta)) * (temp[i + 1, j] - c)
    flux += 0.5 * (kc + conductivity(temp[i - 1, j], k0, beta)) * (temp[i - 1, j] - c)
    flux += 0.5 * (kc + conductivity(temp[i, j + 1], k0, beta)) * (temp[i, j + 1] - c)
    flux += 0.5 * (kc + conductivity(temp[i, j - 1], k0, beta)) * (temp[i, j - 1] - c)
    out[i, j] = c + dt * (flux + power[i, j])


@wp.kernel
def sensor_misfit(
    temp: wp.array2d(dtype=float),
    rows: wp.array(dtype=int),
    cols: wp.array(dtype=int),
    reading: wp.array(dtype=float),
    weight: float,
    loss: wp.array(dtype=float),
):
    s = wp.tid()
    d = temp[rows[s], cols[s]] - reading[s]
    wp.atomic_add(loss, 0, weight * d * d)
