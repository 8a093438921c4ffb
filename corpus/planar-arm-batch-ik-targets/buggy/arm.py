import numpy as np
import warp as wp

import kinematics


class ArmBatch:
    def __init__(self, n_arms, device="cpu", seed=4, limit=1.2, posture=0.01):
        rng = np.random.default_rng(seed)
        self.n, self.device = n_arms, device
        self.joints = int(kinematics.JOINTS)
        self.limit = limit
        self.posture = posture
        self.lengths = wp.array(np.array([0.5, 0.4, 0.3, 0.2], dtype=np.float32), device=device)
        r = rng.uniform(0.4, 1.2, n_arms)
        ang = rng.uniform(-1.0, 2.0, n_arms)
        self.goals = wp.array(np.stack([r * np.cos(ang), r * np.sin(ang)], 1).astype(np.float32), dtype=wp.vec2, device=device)
        self.theta = wp.zeros((n_arms, self.joints), dtype=float, device=device, requires_grad=True)
        self.tips = wp.zeros(n_arms, dtype=wp.vec2, device=device, requires_grad=True)
        self.cost = wp.zeros(1, dtype=float, device=device, requires_grad=True)

    def apply_limits(self, q):
        wp.launch(kinematics.soft_limits, dim=(self.n, self.joints), inputs=[q, self.limit], outputs=[self.theta], device=self.device)

    def evaluate(self, q):
        self.cost.zero_()
        wp.launch(kinematics.forward_kinematics, dim=self.n, inputs=[self.theta, self.lengths], outputs=[self.tips], device=self.device)
        wp.launch(kinematics.reach_cost, dim=self.n, inputs=[self.tips, self.goals, q, self.posture], outputs=[self.cost], device=self.device)
        return self.cost
