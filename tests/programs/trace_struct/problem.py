import numpy as np
import warp as wp


@wp.struct
class State:
    q: wp.array(dtype=wp.float64)


@wp.kernel
def lift(x: wp.array(dtype=wp.float64), s: State):
    i = wp.tid()
    s.q[i] = wp.float64(2.0) * x[i]


@wp.kernel
def energy(s: State, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, s.q[i] * s.q[i])


@wp.kernel
def settle(s: State):
    i = wp.tid()
    s.q[i] = wp.float64(1.0)


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([1.5, -2.0, 0.5]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def _state(self, rg):
        s = State()
        s.q = wp.zeros(3, dtype=wp.float64, requires_grad=rg, device=self.device)
        return s

    def objective(self):
        s = self._state(False)
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(lift, dim=3, inputs=[self.x, s], device=self.device)
        wp.launch(energy, dim=3, inputs=[s, out], device=self.device)
        return float(out.numpy()[0])

    def gradient(self):
        s = self._state(True)
        s2 = self._state(True)
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(lift, dim=3, inputs=[self.x, s], device=self.device)
            wp.launch(energy, dim=3, inputs=[s, out], device=self.device)
            wp.launch(settle, dim=3, inputs=[s], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device)
