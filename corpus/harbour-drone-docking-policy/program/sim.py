import torch
import warp as wp


@wp.kernel
def drift_step(
    p: wp.array(dtype=wp.vec2d),
    v: wp.array(dtype=wp.vec2d),
    thrust: wp.array(dtype=wp.vec2d),
    current: wp.vec2d,
    damping: wp.float64,
    dt: wp.float64,
    p_out: wp.array(dtype=wp.vec2d),
    v_out: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    swirl = wp.vec2d(-p[i][1], p[i][0]) * wp.float64(0.3)
    a = thrust[i] + current + swirl - damping * v[i]
    vn = v[i] + dt * a
    v_out[i] = vn
    p_out[i] = p[i] + dt * vn


@wp.kernel
def dock_distance(p: wp.array(dtype=wp.vec2d), dock: wp.array(dtype=wp.vec2d), w: wp.float64,
                  out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    d = p[i] - dock[i]
    wp.atomic_add(out, 0, w * wp.dot(d, d))


class Harbour:
    def __init__(self, start, dock, steps=30, dt=0.05, device="cpu"):
        self.device = device
        self.steps = steps
        self.dt = dt
        self.start = wp.array(start, dtype=wp.vec2d, device=device)
        self.dock = wp.array(dock, dtype=wp.vec2d, device=device)
        self.n = len(start)

    def run(self, thrust):
        p = self.start
        v = wp.zeros(self.n, dtype=wp.vec2d, device=self.device)
        for _ in range(self.steps):
            p1 = wp.empty(self.n, dtype=wp.vec2d, device=self.device, requires_grad=True)
            v1 = wp.empty(self.n, dtype=wp.vec2d, device=self.device, requires_grad=True)
            wp.launch(drift_step, dim=self.n,
                      inputs=[p, v, thrust, wp.vec2d(0.2, -0.1), wp.float64(0.8), wp.float64(self.dt)],
                      outputs=[p1, v1], device=self.device)
            p, v = p1, v1
        out = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=True)
        wp.launch(dock_distance, dim=self.n, inputs=[p, self.dock, wp.float64(1.0 / self.n)], outputs=[out],
                  device=self.device)
        return out


class DockingLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, thrust, harbour):
        ctx.thrust = wp.from_torch(thrust.detach().contiguous(), dtype=wp.vec2d, requires_grad=True)
        ctx.tape = wp.Tape()
        with ctx.tape:
            ctx.out = harbour.run(ctx.thrust)
        return wp.to_torch(ctx.out)

    @staticmethod
    def backward(ctx, adj_out):
        ctx.tape.backward(grads={ctx.out: wp.from_torch(adj_out.contiguous())})
        adj_thrust = wp.to_torch(ctx.thrust.grad).clone()
        ctx.tape.zero()
        return adj_thrust, None
