import numpy as np
import warp as wp


@wp.kernel
def spring_forces(x: wp.array(dtype=wp.vec2), rest: wp.array(dtype=wp.float32), k: float,
                  f: wp.array(dtype=wp.vec2)):
    s = wp.tid()
    d = x[s + 1] - x[s]
    length = wp.length(d)
    t = k * (length - rest[s]) * d / length
    wp.atomic_add(f, s, t)
    wp.atomic_sub(f, s + 1, t)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec2), v: wp.array(dtype=wp.vec2), f: wp.array(dtype=wp.vec2), damping: float,
              dt: float, x_out: wp.array(dtype=wp.vec2), v_out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    n = x.shape[0]
    if i == 0 or i == n - 1:
        x_out[i] = x[i]
        v_out[i] = v[i]
    else:
        a = f[i] + wp.vec2(0.0, -9.81) - damping * v[i]
        vn = v[i] + dt * a
        v_out[i] = vn
        x_out[i] = x[i] + dt * vn


@wp.kernel
def scan_error(x: wp.array(dtype=wp.vec2), scan: wp.array(dtype=wp.vec2), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    d = x[i] - scan[i]
    wp.atomic_add(out, 0, wp.dot(d, d))


class Strip:
    def __init__(self, nodes, steps, dt=0.02, k=60.0, damping=2.0):
        self.nodes = nodes
        self.steps = steps
        self.dt = dt
        self.k = k
        self.damping = damping
        self.x0 = wp.array(np.stack([np.linspace(0.0, 1.2, nodes), np.zeros(nodes)], 1), dtype=wp.vec2)

    def drape(self, rest):
        x = wp.clone(self.x0, requires_grad=True)
        v = wp.zeros(self.nodes, dtype=wp.vec2, requires_grad=True)
        for _ in range(self.steps):
            f = wp.zeros(self.nodes, dtype=wp.vec2, requires_grad=True)
            wp.launch(spring_forces, dim=self.nodes - 1, inputs=[x, rest, self.k], outputs=[f])
            xn = wp.zeros(self.nodes, dtype=wp.vec2, requires_grad=True)
            vn = wp.zeros(self.nodes, dtype=wp.vec2, requires_grad=True)
            wp.launch(integrate, dim=self.nodes, inputs=[x, v, f, self.damping, self.dt], outputs=[xn, vn])
            x, v = xn, vn
        return x
