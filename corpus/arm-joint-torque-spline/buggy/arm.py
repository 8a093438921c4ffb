import warp as wp


@wp.kernel
def torque_profile(knots: wp.array(dtype=wp.float64), steps: int, tau: wp.array(dtype=wp.float64)):
    k = wp.tid()
    nk = knots.shape[0]
    s = wp.float64(k) / wp.float64(steps - 1) * wp.float64(nk - 1)
    j = wp.min(int(s), nk - 2)
    w = s - wp.float64(j)
    tau[k] = (wp.float64(1.0) - w) * knots[j] + w * knots[j + 1]


@wp.kernel
def arm_step(
    th: wp.array(dtype=wp.float64),
    om: wp.array(dtype=wp.float64),
    tau: wp.array(dtype=wp.float64),
    k: int,
    dt: wp.float64,
    inertia: wp.float64,
    damping: wp.float64,
    mgl: wp.float64,
    th_out: wp.array(dtype=wp.float64),
    om_out: wp.array(dtype=wp.float64),
):
    acc = (tau[k] - damping * om[0] - mgl * wp.sin(th[0])) / inertia
    w = om[0] + dt * acc
    om_out[0] = w
    th_out[0] = th[0] + dt * w


@wp.kernel
def reach_cost(
    th: wp.array(dtype=wp.float64),
    om: wp.array(dtype=wp.float64),
    goal: wp.float64,
    knots: wp.array(dtype=wp.float64),
    effort: wp.float64,
    cost: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    if j == 0:
        d = th[0] - goal
        wp.atomic_add(cost, 0, d * d + wp.float64(0.1) * om[0] * om[0])
    wp.atomic_add(cost, 0, effort * knots[j] * knots[j])


class Arm:
    def __init__(self, steps, dt=0.025, inertia=0.4, damping=0.15, mgl=1.2):
        self.steps = steps
        self.dt = wp.float64(dt)
        self.inertia = wp.float64(inertia)
        self.damping = wp.float64(damping)
        self.mgl = wp.float64(mgl)

    def rollout(self, tau, knots, goal, effort):
        th = [wp.zeros(1, dtype=wp.float64, requires_grad=True) for _ in range(self.steps + 1)]
        om = [wp.zeros(1, dtype=wp.float64, requires_grad=True) for _ in range(self.steps + 1)]
        for k in range(self.steps):
            wp.launch(arm_step, dim=1,
                      inputs=[th[k], om[k], tau, k, self.dt, self.inertia, self.damping, self.mgl],
                      outputs=[th[k + 1], om[k + 1]])
        cost = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        wp.launch(reach_cost, dim=knots.shape[0], inputs=[th[-1], om[-1], wp.float64(goal), knots, wp.float64(effort)],
                  outputs=[cost])
        return cost
