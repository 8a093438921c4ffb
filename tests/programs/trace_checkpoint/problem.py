import numpy as np
import warp as wp


@wp.kernel
def step(x: wp.array(dtype=wp.float64), s_in: wp.array(dtype=wp.float64), s_out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    s_out[i] = s_in[i] * x[i] + wp.float64(0.5)


@wp.kernel
def misfit(s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, s[i] * s[i])


class Problem:
    def __init__(self, device):
        self.device = device
        self.x = wp.array(np.array([0.9, -0.5, 0.75]), dtype=wp.float64, requires_grad=True, device=device)
        self.s0 = wp.array(np.array([1.0, 2.0, 3.0]), dtype=wp.float64, device=device)
        self.params = {"x": self.x}
        self.windows = 3

    def _advance(self, s, rg):
        out = wp.zeros(3, dtype=wp.float64, requires_grad=rg, device=self.device)
        wp.launch(step, dim=3, inputs=[self.x, s, out], device=self.device)
        return out

    def objective(self):
        s, total = self.s0, 0.0
        for _ in range(self.windows):
            s = self._advance(s, False)
            out = wp.zeros(1, dtype=wp.float64, device=self.device)
            wp.launch(misfit, dim=3, inputs=[s, out], device=self.device)
            total += float(out.numpy()[0])
        return total

    def gradient(self):
        d = self.device
        checkpoints = [self.s0]
        for _ in range(self.windows):
            checkpoints.append(self._advance(checkpoints[-1], False))
        grad = np.zeros(3)
        carry = None
        for w in reversed(range(self.windows)):
            start = wp.clone(checkpoints[w], requires_grad=True)
            out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=d)
            tape = wp.Tape()
            with tape:
                end = self._advance(start, True)
                wp.launch(misfit, dim=3, inputs=[end, out], device=d)
            seeds = {out: wp.ones(1, dtype=wp.float64, device=d)}
            if carry is not None:
                seeds[end] = carry
            tape.backward(grads=seeds)
            carry = wp.clone(start.grad)
            grad += self.x.grad.numpy()
            tape.zero()
        return {"x": grad}


def make_problem(device, scale="small"):
    return Problem(device)
