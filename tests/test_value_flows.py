"""Value flows of a kernel (:func:`defects4warp.kernel_access._value_flows`) and the trace's
``missing_requires_grad`` finding, which needs an array whose *values* depend on a param: an
array a param-reading launch also writes, but with values from elsewhere (a copied constant,
a slot drawn from a counter), carries no gradient of the params with or without
``requires_grad``. Small programs of our own, written to ``tmp_path``."""

import importlib.util
import textwrap

import numpy as np
import pytest


def _module(tmp_path, name, src):
    f = tmp_path / f"{name}.py"
    f.write_text(textwrap.dedent(src))
    spec = importlib.util.spec_from_file_location(f"{name}_{id(tmp_path)}", f)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_value_flows_follow_values_not_indices(tmp_path):
    from defects4warp.kernel_access import _value_flows

    m = _module(tmp_path, "vf_plain", '''
        def take(n, tag, i):
            return atomic_add(n, 0, 1)

        def pack(x, w, label, n, tag, out, out_label, thr):
            i = tid()
            if w[i] > thr:
                k = take(n, tag, i)
                out[k] = x[i] * w[i]
                out_label[k] = label[i]
            acc = float(0.0)
            for j in range(3):
                acc = acc + x[j]
            v = out
            v[0] += acc
        ''')
    flows = _value_flows(m.pack)
    # out gets x and w (values), and through the alias v the loop sum of x; never n (the index)
    assert flows["out"] == {"x", "w", "out"}
    assert flows["out_label"] == {"label"}
    # the counter and what is handed to the helper may be written with what the helper was given
    assert flows["n"] == {"n", "tag"} and flows["tag"] == {"n", "tag"}
    assert "thr" not in set().union(*flows.values())  # a branch condition carries no value


def test_value_flows_unknown_construct_is_none(tmp_path):
    from defects4warp.kernel_access import _value_flows

    m = _module(tmp_path, "vf_unknown", '''
        def k(x, y):
            i = tid()
            with foo():
                y[i] = x[i]
        ''')
    assert _value_flows(m.k) is None


PROGRAM = '''
import numpy as np
import warp as wp


@wp.kernel
def split(x: wp.array(dtype=float), base: wp.array(dtype=float),
          y: wp.array(dtype=float), floor: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]
    floor[i] = base[i] + 1.0


@wp.kernel
def total(y: wp.array(dtype=float), floor: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, y[i] * floor[i])


class P:
    def __init__(self, wired):
        self.x = wp.array(np.array([0.5, -1.0, 2.0]), dtype=float, requires_grad=True)
        self.base = wp.array(np.array([1.0, 2.0, 3.0]), dtype=float)
        # floor's values come from base only: no requires_grad needed; y's come from x
        self.y = wp.zeros(3, dtype=float, requires_grad=wired)
        self.floor = wp.zeros(3, dtype=float)
        self.params = {"x": self.x}

    def loss(self):
        out = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(split, dim=3, inputs=[self.x, self.base], outputs=[self.y, self.floor])
        wp.launch(total, dim=3, inputs=[self.y, self.floor], outputs=[out])
        return out

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self.loss()
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return g
'''


@pytest.mark.parametrize("wired", [True, False])
def test_missing_requires_grad_needs_a_value_path(wired, tmp_path):
    import warp as wp

    from defects4warp.measure import trace as tm

    wp.config.quiet = True
    m = _module(tmp_path, f"vf_prog_{wired}", PROGRAM)
    p = m.P(wired)
    g0 = p.gradient()
    result, trace = tm.trace_call(p.gradient, params=p.params)
    findings = [f for f in tm.trace_findings(trace) if f["id"] == "missing_requires_grad"]
    split_ev = next(e for e in trace["events"] if e["kind"] == "launch" and "split" in e["kernel"])
    lab = {e["arg"]: e["array"] for e in split_ev["args"] if "array" in e}
    assert split_ev["flows"][lab["floor"]] == [lab["base"]]
    assert split_ev["flows"][lab["y"]] == [lab["x"]]
    if wired:
        # correct: d/dx sum(x^2 (base + 1)) = 2 x (base + 1); floor lacks requires_grad and is not flagged
        assert g0 == pytest.approx(2 * np.array([0.5, -1.0, 2.0]) * np.array([2.0, 3.0, 4.0]))
        assert findings == []
    else:
        # y carries x's values without requires_grad: the gradient is lost and the finding names y
        assert not g0.any()
        (f,) = findings
        assert f["data"]["arrays"] == [lab["y"]]



BATCH_PROGRAM = '''
import numpy as np
import warp as wp


@wp.kernel
def misfit(x: wp.array(dtype=float), data: wp.array(dtype=float), start: int, out: wp.array(dtype=float)):
    i = wp.tid()
    r = x[i] - data[start + i]
    wp.atomic_add(out, 0, r * r)


class P:
    def __init__(self, same_batch):
        self.x = wp.array(np.array([0.5, -1.0, 2.0]), dtype=float, requires_grad=True)
        self.data = wp.array(np.array([1.0, 2.0, 3.0, -1.0, 0.0, 4.0]), dtype=float)
        self.params = {"x": self.x}
        self.same_batch = same_batch

    def loss(self, start):
        out = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(misfit, dim=3, inputs=[self.x, self.data, start], outputs=[out])
        return out

    def objective(self):
        return float(self.loss(0).numpy()[0])

    def gradient(self):
        tape = wp.Tape()
        with tape:
            out = self.loss(0 if self.same_batch else 3)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return g
'''


@pytest.mark.parametrize("same_batch", [True, False])
def test_taped_loss_is_the_objective(same_batch, tmp_path):
    """gradient() differentiating another batch than objective() evaluates: the seeded loss holds
    another value than the objective (the finding); the same batch: silent."""
    import warp as wp

    from defects4warp.measure import trace as tm

    wp.config.quiet = True
    m = _module(tmp_path, f"vf_batch_{same_batch}", BATCH_PROGRAM)
    p = m.P(same_batch)
    f0 = p.objective()
    assert f0 == pytest.approx(0.25 + 9.0 + 1.0)
    _, trace = tm.trace_call(p.gradient, params=p.params)
    found = [f for f in tm.trace_findings(trace, objective=f0) if f["id"] == "taped_loss_not_objective"]
    if same_batch:
        assert found == []
    else:
        (f,) = found
        # the taped loss is the misfit against data[3:6] = [-1, 0, 4]: 1.5^2 + 1 + 4
        assert f["data"]["taped"] == pytest.approx(2.25 + 1.0 + 4.0)
        assert f["data"]["objective"] == pytest.approx(f0)
    # without an objective nothing is judged
    assert not [f for f in tm.trace_findings(trace) if f["id"] == "taped_loss_not_objective"]


def test_integer_ratios_of_the_taped_loss_to_the_objective():
    """k (or 1/k) times the objective gives k; 0.05402 vs 0.07410 (spray-coating's two draws), negated
    losses, and ratios that overflow or underflow give 0 (no exception)."""
    from defects4warp.measure.detectors import _integer_ratio

    assert _integer_ratio(2.0 * 1.2345, 1.2345) == 2 and _integer_ratio(0.41150, 1.2345) == 3
    assert _integer_ratio(0.05402, 0.07410) == 0
    assert _integer_ratio(-1.2345, 1.2345) == 0 and _integer_ratio(-2.469, 1.2345) == 0
    assert _integer_ratio(2.01 * 1.2345, 1.2345) == 0
    assert _integer_ratio(1e308, 1e-308) == 0 and _integer_ratio(1e-320, 1.0) == 0 and _integer_ratio(1e-308, 1e308) == 0


MEAN_REPORTED = '''
import numpy as np
import warp as wp


@wp.kernel
def sq(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i] * x[i])


class Problem:
    def __init__(self, device, n):
        self.device = device
        self.x = wp.array(np.linspace(0.5, 1.5, n), dtype=wp.float64, requires_grad=True, device=device)
        self.params = {"x": self.x}
        self.n = n

    def objective(self):
        out = wp.zeros(1, dtype=wp.float64, device=self.device)
        wp.launch(sq, dim=self.n, inputs=[self.x, out], device=self.device)
        return float(out.numpy()[0]) / self.n

    def gradient(self):
        out = wp.zeros(1, dtype=wp.float64, requires_grad=True, device=self.device)
        tape = wp.Tape()
        with tape:
            wp.launch(sq, dim=self.n, inputs=[self.x, out], device=self.device)
        tape.backward(out)
        g = self.x.grad.numpy().copy()
        tape.zero()
        return {"x": g}


def make_problem(device, scale="small"):
    return Problem(device, N)
'''


@pytest.mark.parametrize("n", [8, 40])
def test_a_summed_loss_reported_as_its_mean_is_found_for_small_n_too(n, tmp_path):
    """objective() reports the mean of n squares, the backward seeds their sum: the taped loss is n times
    the objective with ONE launch writing it (not a duplicate launch), so the finding is made for n = 8
    as for n = 40 (before, any ratio up to 16 was taken for accumulation)."""
    import warp as wp
    from defects4warp.measure import trace as tm

    wp.config.quiet = True
    m = _module(tmp_path, f"mean_reported_{n}", MEAN_REPORTED.replace("Problem(device, N)", f"Problem(device, {n})"))
    p = m.make_problem("cpu")
    f0 = p.objective()
    _, trace = tm.trace_call(p.gradient, params=p.params)
    findings = tm.trace_findings(trace, objective=f0)
    assert [f["data"]["taped"] / f["data"]["objective"] for f in findings
            if f["id"] == "taped_loss_not_objective"] == pytest.approx([float(n)])
