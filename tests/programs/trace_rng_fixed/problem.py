import numpy as np
import warp as wp


@wp.kernel
def seed_streams(seed: int, states: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    states[i] = wp.uint32(wp.rand_init(seed, i))


@wp.kernel
def noisy_step(x: wp.array(dtype=wp.float64), s_in: wp.array(dtype=wp.float64), states: wp.array(dtype=wp.uint32),
               next_states: wp.array(dtype=wp.uint32), s_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    rng = states[i]
    n = wp.float64(wp.randn(rng))
    next_states[i] = rng
    s_out[i] = s_in[i] * x[i] + wp.float64(0.1) * n * x[i]


@wp.kernel
def energy(s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, s[i] * s[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.1, 0.9, 1.2]), dtype=wp.float64, requires_grad=True, device=device)
        self.s0 = wp.array(np.array([1.0, 2.0, 3.0]), dtype=wp.float64, device=device)
        self.states = wp.zeros(3, dtype=wp.uint32, device=device)
        self.params = {"x": self.x}

    def _run(self, rg):
        d = self.device
        wp.launch(seed_streams, dim=3, inputs=[42, self.states], device=d)
        states = self.states
        s = self.s0
        for _ in range(3):
            nxt = wp.zeros(3, dtype=wp.uint32, device=d)
            s_out = wp.zeros(3, dtype=wp.float64, requires_grad=rg, device=d)
            wp.launch(noisy_step, dim=3, inputs=[self.x, s, states, nxt, s_out], device=d)
            states, s = nxt, s_out
        out = wp.zeros(1, dtype=wp.float64, requires_grad=rg, device=d)
        wp.launch(energy, dim=3, inputs=[s, out], device=d)
        return out

    def objective(self):
        return float(self._run(False).numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self._run(True)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
