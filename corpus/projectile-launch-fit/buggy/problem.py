import numpy as np
import warp as wp


@wp.kernel
def launch_state(
    vx: wp.array(dtype=wp.float64),
    vy: wp.array(dtype=wp.float64),
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    pos[i] = wp.vec2d(wp.float64(0.0), wp.float64(0.0))
    vel[i] = wp.vec2d(vx[i], vy[i])


@wp.kernel
def advance(
    pos: wp.array(dtype=wp.vec2d),
    vel: wp.array(dtype=wp.vec2d),
    drag: wp.float64,
    dt: wp.float64,
    pos_next: wp.array(dtype=wp.vec2d),
    vel_next: wp.array(dtype=wp.vec2d),
):
    i = wp.tid()
    v = vel[i]
    g = wp.vec2d(wp.float64(0.0), wp.float64(-9.81))
    a = g - drag * wp.length(v) * v
    vn = v + dt * a
    vel_next[i] = vn
    pos_next[i] = pos[i] + dt * vn


@wp.kernel
def landing_loss(
    pos: wp.array(dtype=wp.vec2d),
    target: wp.array(dtype=wp.vec2d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = pos[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Problem:
    def __init__(self, device, n, steps):
        self.device = device
        self.n = n
        self.steps = steps
        self.drag = 0.05
        self.dt = 0.02
        rng = np.random.default_rng(9)
        self.params = {
            "vx": wp.array(rng.uniform(3.0, 5.0, n), dtype=wp.float64, device=device, requires_grad=True),
            "vy": wp.array(rng.uniform(4.0, 6.0, n), dtype=wp.float64, device=device, requires_grad=True),
        }
        target = np.stack([rng.uniform(2.0, 3.5, n), rng.uniform(0.5, 1.5, n)], axis=1)
        self.target = wp.array(target, dtype=wp.vec2d, device=device)
        self.pos = [wp.zeros(n, dtype=wp.vec2d, device=device, requires_grad=True) for _ in range(steps + 1)]
        self.vel = [wp.zeros(n, dtype=wp.vec2d, device=device, requires_grad=True) for _ in range(steps + 1)]
        self.loss = wp.zeros(1, dtype=wp.float64, device=device, requires_grad=True)
        self.tape = wp.Tape()

    def _evaluate(self):
        wp.launch(
            landing_loss,
            dim=self.n,
            inputs=[self.pos[-1], self.target],
            outputs=[self.loss],
            device=self.device,
        )

    def _rollout(self):
        self.loss.zero_()
        wp.launch(
            launch_state,
            dim=self.n,
            inputs=[self.params["vx"], self.params["vy"]],
            outputs=[self.pos[0], self.vel[0]],
            device=self.device,
        )
        for t in range(self.steps):
            wp.launch(
                advance,
                dim=self.n,
                inputs=[self.pos[t], self.vel[t], wp.float64(self.drag), wp.float64(self.dt)],
                outputs=[self.pos[t + 1], self.vel[t + 1]],
                device=self.device,
            )
        self._evaluate()

    def objective(self):
        self._rollout()
        return float(self.loss.numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            self._rollout()
            self._evaluate()
        self.tape.backward(self.loss)
        out = {k: v.grad.numpy().copy() for k, v in self.params.items()}
        self.tape.zero()
        return out

    def train(self, iterations, lr=0.05):
        losses = []
        for _ in range(iterations):
            losses.append(self.objective())
            g = self.gradient()
            for k, arr in self.params.items():
                arr.assign(arr.numpy() - lr * g[k])
        return losses


def make_problem(device, scale="small"):
    if scale == "production":
        return Problem(device, n=64, steps=40)
    return Problem(device, n=4, steps=40)
