import numpy as np
import warp as wp

from arm import Links, forward_kinematics, reach_cost


class BatchIK:
    def __init__(self, goals, q_init, lengths=(0.5, 0.4, 0.25), w_posture=1.0e-2, device=None):
        self.device = device
        self.n = len(goals)
        self.links = Links()
        self.links.l0, self.links.l1, self.links.l2 = lengths
        self.goals = wp.array(goals, dtype=wp.vec2d, device=device)
        self.q = wp.array(q_init, dtype=wp.float64, device=device, requires_grad=True)
        self.rest = wp.array(np.array([0.3, 0.6, 0.4]), dtype=wp.float64, device=device)
        self.w_posture = w_posture
        self.tips = wp.zeros(self.n, dtype=wp.vec2d, device=device, requires_grad=True)
        self.cost = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.m = np.zeros(q_init.shape)
        self.v = np.zeros(q_init.shape)
        self.iteration = 0

    def forward(self):
        self.cost.zero_()
        wp.launch(forward_kinematics, dim=self.n, inputs=[self.q, self.links], outputs=[self.tips], device=self.device)
        wp.launch(reach_cost, dim=self.n,
                  inputs=[self.tips, self.goals, self.q, self.rest, wp.float64(self.w_posture)],
                  outputs=[self.cost], device=self.device)
        return self.cost

    def value(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            cost = self.forward()
        tape.backward(cost)
        return float(cost.numpy()[0]), self.q.grad.numpy().copy()

    def update(self, g, lr=0.02, b1=0.9, b2=0.99):
        self.iteration += 1
        self.m = b1 * self.m + (1.0 - b1) * g
        self.v = b2 * self.v + (1.0 - b2) * g * g
        step = (self.m / (1.0 - b1 ** self.iteration)) / (np.sqrt(self.v / (1.0 - b2 ** self.iteration)) + 1.0e-10)
        self.q.assign(self.q.numpy() - lr * step)

    def solve(self, iterations, callback=None):
        costs = []
        for it in range(iterations):
            c, g = self.gradient()
            self.update(g)
            costs.append(c)
            if callback:
                callback(it, c, g)
        return costs
