"""The reference probe compares finite differences with ``reference_gradient()`` along the random
directions too, not only at the sampled coordinates: a surrogate gradient that differs from the
function's derivative at one coordinate of 400 (a straight-through adjoint of a clamp on the one
saturated entry) is missed by 5 sampled coordinates but seen along every direction, which mixes
all of them. A small program of our own, written to ``tmp_path`` and diagnosed by the engine."""

import pytest

pytestmark = pytest.mark.slow

PROGRAM = '''
import numpy as np
import warp as wp


@wp.func
def clamp1(u: wp.float64) -> wp.float64:
    return wp.min(wp.max(u, wp.float64(-1.0)), wp.float64(1.0))


@wp.func_grad(clamp1)
def adj_clamp1(u: wp.float64, adj_ret: wp.float64):
    wp.adjoint[u] += adj_ret


@wp.kernel
def energy(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    c = clamp1(x[i])
    wp.atomic_add(out, 0, c * c + wp.float64(0.1) * x[i])


class Problem:
    def __init__(self, device, n):
        self.device = device
        x = np.linspace(-0.8, 0.8, n)
        x[SATURATED] = 1.5
        self.x = wp.array(x, dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}

    def forward(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        wp.launch(energy, dim=self.x.shape[0], inputs=[self.x], outputs=[out], device=self.device)
        return out

    def objective(self):
        return float(self.forward().numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self.forward()
        tape.backward(out)
        g = {"x": self.x.grad.numpy().copy()}
        tape.zero()
        return g

    def reference_gradient(self):
        x = self.x.numpy()
        return {"x": 2.0 * np.clip(x, -1.0, 1.0) + 0.1}


SATURATED = 137


def make_problem(device, scale="small"):
    return Problem(device, 400)
'''


def test_a_surrogate_at_one_coordinate_is_seen_along_directions(tmp_path):
    from defects4warp.engines import ReferenceEngine

    (tmp_path / "problem.py").write_text(PROGRAM)
    d = ReferenceEngine(timeout_s=180, differential=False).diagnose(str(tmp_path), "cpu", "small")
    assert d["verdict"] == "no_bug", d.get("error")
    ref = [e["finding"] for e in d["evidence"] if e["probe"] == "reference"]
    # autodiff is the straight-through reference everywhere; finite differences see the clamp
    assert any("call 1 vs reference_gradient: agrees" in f for f in ref), ref
    assert any("finite differences disagree with reference_gradient()" in f for f in ref), ref
    assert d["classes"][0]["id"] == "surrogate_gradient", d["classes"]
