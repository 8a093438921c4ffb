import warp as wp

wp.set_module_options({"enable_backward": False})

GRAVITY = wp.constant(wp.float64(9.81))
VISCOSITY = wp.constant(wp.float64(1.0e-6))
PI = wp.constant(wp.float64(3.141592653589793))


@wp.func
def swamee_jain(roughness: wp.float64, diameter: wp.float64, velocity: wp.float64):
    re = velocity * diameter / VISCOSITY
    arg = roughness / (wp.float64(3.7) * diameter) + wp.float64(5.74) / wp.pow(re, wp.float64(0.9))
    lg = wp.log(arg) / wp.log(wp.float64(10.0))
    return wp.float64(0.25) / (lg * lg)


@wp.kernel
def pipe_velocity(
    flow: wp.array(dtype=wp.float64),
    diameter: wp.array(dtype=wp.float64),
    n_pipes: int,
    velocity: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    d = diameter[t % n_pipes]
    velocity[t] = flow[t] / (wp.float64(0.25) * PI * d * d)


@wp.kernel(enable_backward=True)
def head_drop(
    velocity: wp.array(dtype=wp.float64),
    roughness: wp.array(dtype=wp.float64),
    fitting_k: wp.array(dtype=wp.float64),
    diameter: wp.array(dtype=wp.float64),
    length: wp.array(dtype=wp.float64),
    n_pipes: int,
    drop: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    p = t % n_pipes
    v = velocity[t]
    d = diameter[p]
    dyn = v * v / (wp.float64(2.0) * GRAVITY)
    f = swamee_jain(roughness[p] * wp.float64(1.0e-3), d, v)
    drop[t] = f * length[p] / d * dyn + fitting_k[p] * dyn
