import numpy as np
import warp as wp


@wp.kernel
def joint_step(
    qd: wp.array(dtype=wp.vec3d),
    torque: wp.array(dtype=wp.vec3d),
    coulomb: wp.array(dtype=wp.vec3d),
    viscous: wp.array(dtype=wp.vec3d),
    inv_inertia: wp.vec3d,
    dt: wp.float64,
    qd_next: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    v = qd[i]
    s = wp.sign(v)
    friction = wp.cw_mul(coulomb[i], s) + wp.cw_mul(viscous[i], v)
    qd_next[i] = v + dt * wp.cw_mul(inv_inertia, torque[i] - friction)


@wp.kernel
def encoder_misfit(
    qd: wp.array(dtype=wp.vec3d),
    logged: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = qd[i] - logged[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class FrictionId:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.dt = 0.01
        self.inv_inertia_np = np.array([2.0, 3.0, 5.0])
        self.inv_inertia = wp.vec3d(*self.inv_inertia_np)
        rng = np.random.default_rng(5)
        direction = np.where(rng.uniform(size=(n, 3)) < 0.5, -1.0, 1.0)
        self.qd0_np = direction * rng.uniform(0.4, 0.9, (n, 3))
        self.torque_np = direction * rng.uniform(1.5, 2.5, (n, 3))
        self.qd0 = wp.array(self.qd0_np, dtype=wp.vec3d, device=device)
        self.torque = wp.array(self.torque_np, dtype=wp.vec3d, device=device)
        true_c = rng.uniform(0.3, 0.8, (n, 3))
        true_b = rng.uniform(0.5, 1.5, (n, 3))
        self.logged = [wp.array(v, dtype=wp.vec3d, device=device) for v in self._rollout_numpy(true_c, true_b)[1:]]
        self.coulomb = wp.array(np.full((n, 3), 0.5), dtype=wp.vec3d, requires_grad=True, device=device)
        self.viscous = wp.array(np.full((n, 3), 1.0), dtype=wp.vec3d, requires_grad=True, device=device)
        self.params = {"coulomb": self.coulomb, "viscous": self.viscous}

    def _rollout_numpy(self, c, b):
        v = self.qd0_np.copy()
        out = [v.copy()]
        for _ in range(self.steps):
            v = v + self.dt * self.inv_inertia_np * (self.torque_np - c * np.sign(v) - b * v)
            out.append(v.copy())
        return out

    def forward(self):
        qd = self.qd0
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        for k in range(self.steps):
            qd_next = wp.zeros(self.n, dtype=wp.vec3d, requires_grad=True, device=self.device)
            wp.launch(
                joint_step,
                dim=self.n,
                inputs=[qd, self.torque, self.coulomb, self.viscous, self.inv_inertia, wp.float64(self.dt)],
                outputs=[qd_next],
                device=self.device,
            )
            wp.launch(encoder_misfit, dim=self.n, inputs=[qd_next, self.logged[k]], outputs=[loss], device=self.device)
            qd = qd_next
        return loss

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            loss = self.forward()
        tape.backward(loss)
        grads = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        tape.zero()
        return grads

    def train(self, iterations, lr=0.01):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, v in self.params.items():
                v.assign(v.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return FrictionId(device, n=128, steps=400)
    return FrictionId(device, n=4, steps=40)
