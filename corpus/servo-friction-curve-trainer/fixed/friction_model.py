import warp as wp


@wp.func
def friction(v: float, coulomb: float, sharp: float, viscous: float):
    return coulomb * wp.tanh(sharp * v) + viscous * v


@wp.kernel
def residual_sq(
    theta: wp.array(dtype=wp.float32),
    speed: wp.array(dtype=wp.float32),
    torque: wp.array(dtype=wp.float32),
    out: wp.array(dtype=wp.float32),
):
    i = wp.tid()
    r = friction(speed[i], theta[0], theta[1], theta[2]) - torque[i]
    out[i] = r * r


class FrictionModel:
    def __init__(self, speed, torque):
        self.speed = wp.array(speed, dtype=wp.float32)
        self.torque = wp.array(torque, dtype=wp.float32)
        self.n = len(speed)
        self.theta = wp.array([0.5, 1.0, 0.05], dtype=wp.float32, requires_grad=True)

    def per_sample(self):
        out = wp.zeros(self.n, dtype=wp.float32, requires_grad=True)
        wp.launch(residual_sq, dim=self.n, inputs=[self.theta, self.speed, self.torque], outputs=[out])
        return out
