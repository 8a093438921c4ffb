import numpy as np
import warp as wp


@wp.kernel
def drive(
    q: wp.array(dtype=wp.float64),
    qd: wp.array(dtype=wp.float64),
    target: wp.array(dtype=wp.float64),
    kp: wp.float64,
    kd: wp.float64,
    dt: wp.float64,
    q_pred: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    acc = kp * (target[i] - q[i]) - kd * qd[i]
    q_pred[i] = q[i] + dt * (qd[i] + dt * acc)


@wp.kernel
def enforce_limits(
    q_pred: wp.array(dtype=wp.float64),
    q: wp.array(dtype=wp.float64),
    lower: wp.array(dtype=wp.float64),
    upper: wp.array(dtype=wp.float64),
    inv_dt: wp.float64,
    q_out: wp.array(dtype=wp.float64),
    qd_out: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    j = i % 2
    p = q_pred[i]
    c = wp.clamp(p, lower[j], upper[j])
    q_out[i] = c
    qd_out[i] = (c - q[i]) * inv_dt


@wp.kernel
def reach_error(
    q: wp.array(dtype=wp.float64),
    goal: wp.array(dtype=wp.vec2d),
    upper_len: wp.float64,
    fore_len: wp.float64,
    loss: wp.array(dtype=wp.float64),
):
    a = wp.tid()
    q1 = q[2 * a]
    q2 = q[2 * a + 1]
    tip = wp.vec2d(
        upper_len * wp.cos(q1) + fore_len * wp.cos(q1 + q2),
        upper_len * wp.sin(q1) + fore_len * wp.sin(q1 + q2),
    )
    d = tip - goal[a]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class ArmBatch:
    def __init__(self, device, arms, steps, reach_past):
        self.device = device
        self.arms = arms
        self.steps = steps
        self.dt = 0.01
        self.kp = 100.0
        self.kd = 20.0
        self.upper_len = 0.35
        self.fore_len = 0.3
        self.lower = wp.array([-1.5, 0.1], dtype=wp.float64, device=device)
        self.upper = wp.array([1.5, 2.6], dtype=wp.float64, device=device)
        rng = np.random.default_rng(3)
        shoulder = rng.uniform(-0.8, 0.8, arms)
        elbow = rng.uniform(0.6, 2.0, arms)
        self.q0 = np.stack([shoulder, elbow], axis=1).reshape(-1)
        cmd_shoulder = shoulder + rng.uniform(-0.5, 0.5, arms)
        cmd_elbow = elbow + rng.uniform(-0.4, 0.4, arms)
        if reach_past:
            far = rng.permutation(arms)[: arms // 3]
            cmd_elbow[far] = rng.uniform(-0.4, -0.1, len(far))
        self.target = wp.array(
            np.stack([cmd_shoulder, cmd_elbow], axis=1).reshape(-1), dtype=wp.float64, requires_grad=True, device=device
        )
        gs = cmd_shoulder + 0.1 * rng.standard_normal(arms)
        ge = np.clip(cmd_elbow + 0.1 * rng.standard_normal(arms), 0.15, 2.5)
        goal = np.stack(
            [
                self.upper_len * np.cos(gs) + self.fore_len * np.cos(gs + ge),
                self.upper_len * np.sin(gs) + self.fore_len * np.sin(gs + ge),
            ],
            axis=1,
        )
        self.goal = wp.array(goal, dtype=wp.vec2d, device=device)
        self.params = {"target": self.target}

    def forward(self):
        n = 2 * self.arms
        q = wp.array(self.q0, dtype=wp.float64, requires_grad=True, device=self.device)
        qd = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
        for _ in range(self.steps):
            q_pred = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
            q_next = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
            qd_next = wp.zeros(n, dtype=wp.float64, requires_grad=True, device=self.device)
            wp.launch(
                drive,
                dim=n,
                inputs=[q, qd, self.target, wp.float64(self.kp), wp.float64(self.kd), wp.float64(self.dt)],
                outputs=[q_pred],
                device=self.device,
            )
            wp.launch(
                enforce_limits,
                dim=n,
                inputs=[q_pred, q, self.lower, self.upper, wp.float64(1.0 / self.dt)],
                outputs=[q_next, qd_next],
                device=self.device,
            )
            q, qd = q_next, qd_next
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(
            reach_error,
            dim=self.arms,
            inputs=[q, self.goal, wp.float64(self.upper_len), wp.float64(self.fore_len)],
            outputs=[loss],
            device=self.device,
        )
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        g = self.target.grad.numpy().copy()
        tape.zero()
        return {"target": g}

    def train(self, iterations, lr=0.5):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()["target"]
            self.target.assign(self.target.numpy() - lr * g)
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return ArmBatch(device, arms=48, steps=60, reach_past=True)
    return ArmBatch(device, arms=6, steps=30, reach_past=False)
