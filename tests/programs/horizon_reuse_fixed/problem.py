import numpy as np
import warp as wp


@wp.kernel
def advance(s: wp.array(dtype=wp.float64), a: wp.array(dtype=wp.float64), s_next: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s_next[i] = s[i] * a[0] + wp.float64(0.1)


@wp.kernel
def total(s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, s[i] * s[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.steps = 8
        self.a = wp.array(np.array([0.9]), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"a": self.a}

    def _rollout(self, out, buffers):
        for t in range(self.steps):
            wp.launch(advance, dim=2, inputs=[buffers[t], self.a, buffers[t + 1]], device=self.device)
        wp.launch(total, dim=2, inputs=[buffers[self.steps], out], device=self.device)

    def _buffers(self):
        first = wp.array(np.array([1.0, 2.0]), dtype=wp.float64, requires_grad=True, device=self.device)
        bufs = [first] + [wp.zeros(2, dtype=wp.float64, requires_grad=True, device=self.device)
                          for _ in range(min(self.steps, LIMIT))]
        while len(bufs) < self.steps + 1:
            bufs.append(bufs[-2])
        return bufs

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        self._rollout(out, self._buffers())
        return float(out.numpy()[0])

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        bufs = self._buffers()
        tape = wp.Tape()
        with tape:
            self._rollout(out, bufs)
        tape.backward(out)
        g = self.a.grad.numpy().copy()
        tape.zero()
        return {"a": g}


LIMIT = 1000


def make_problem(device, scale="small"):
    return Problem(device)
