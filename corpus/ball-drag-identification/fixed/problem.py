import numpy as np
import warp as wp


@wp.kernel
def integrate(
    x: wp.array(dtype=wp.vec3d),
    v: wp.array(dtype=wp.vec3d),
    gravity: wp.vec3d,
    dt: wp.float64,
    x_out: wp.array(dtype=wp.vec3d),
    v_out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    vn = v[i] + gravity * dt
    v_out[i] = vn
    x_out[i] = x[i] + vn * dt


@wp.kernel
def apply_drag(
    v: wp.array(dtype=wp.vec3d),
    drag: wp.array(dtype=wp.float64),
    dt: wp.float64,
    v_out: wp.array(dtype=wp.vec3d),
):
    i = wp.tid()
    v_out[i] = v[i] * (wp.float64(1.0) - drag[i] * dt * wp.length(v[i]))


@wp.kernel
def track_error(
    x: wp.array(dtype=wp.vec3d),
    observed: wp.array(dtype=wp.vec3d),
    loss: wp.array(dtype=wp.float64),
):
    i = wp.tid()
    d = x[i] - observed[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class Problem:
    def __init__(self, device, scale):
        self.device = device
        self.n = 4 if scale == "small" else 16
        self.steps = 12 if scale == "small" else 60
        self.dt = 0.05 if scale == "small" else 0.01
        self.gravity = wp.vec3d(0.0, -9.81, 0.0)
        rng = np.random.default_rng(3)
        x0 = rng.uniform(-0.5, 0.5, size=(self.n, 3))
        v_true = rng.uniform(1.0, 4.0, size=(self.n, 3))
        drag_true = rng.uniform(0.1, 0.3, size=self.n)
        self.x0 = wp.array(x0, dtype=wp.vec3d, device=device)
        self.observed = None
        self.observed = self._rollout(
            wp.array(v_true, dtype=wp.vec3d, device=device),
            wp.array(drag_true, dtype=wp.float64, device=device),
            False,
        )[1]
        for obs in self.observed:
            obs.assign(obs.numpy() + rng.normal(0.0, 0.02, size=(self.n, 3)))
        v_guess = v_true + rng.uniform(-0.5, 0.5, size=(self.n, 3))
        drag_guess = np.full(self.n, 0.2)
        self.params = {
            "v0": wp.array(v_guess, dtype=wp.vec3d, device=device, requires_grad=True),
            "drag": wp.array(drag_guess, dtype=wp.float64, device=device, requires_grad=True),
        }
        self.tape = wp.Tape()

    def _rollout(self, v0, drag, requires_grad):
        x = self.x0
        v = v0
        loss = wp.zeros(1, dtype=wp.float64, device=self.device, requires_grad=requires_grad)
        trajectory = []
        for t in range(self.steps):
            x_next = wp.zeros(self.n, dtype=wp.vec3d, device=self.device, requires_grad=requires_grad)
            v_free = wp.zeros(self.n, dtype=wp.vec3d, device=self.device, requires_grad=requires_grad)
            v_next = wp.zeros(self.n, dtype=wp.vec3d, device=self.device, requires_grad=requires_grad)
            wp.launch(
                integrate,
                dim=self.n,
                inputs=[x, v, self.gravity, wp.float64(self.dt)],
                outputs=[x_next, v_free],
                device=self.device,
            )
            wp.launch(
                apply_drag,
                dim=self.n,
                inputs=[v_free, drag, wp.float64(self.dt)],
                outputs=[v_next],
                device=self.device,
            )
            if self.observed is not None:
                wp.launch(
                    track_error,
                    dim=self.n,
                    inputs=[x_next, self.observed[t]],
                    outputs=[loss],
                    device=self.device,
                )
            trajectory.append(x_next)
            x, v = x_next, v_next
        return loss, trajectory

    def objective(self):
        loss, _ = self._rollout(self.params["v0"], self.params["drag"], False)
        return float(loss.numpy()[0])

    def gradient(self):
        self.tape.reset()
        with self.tape:
            loss, _ = self._rollout(self.params["v0"], self.params["drag"], True)
        self.tape.backward(loss)
        g = {k: a.grad.numpy().copy() for k, a in self.params.items()}
        self.tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device, scale)
