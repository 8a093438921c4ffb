"""Evidence for three mechanisms the engine had none for.

* ``returned_grad_overwritten`` (harness/measure/aliasing.py): the gradient a
  program returns is a view of a ``.grad`` buffer (``x.grad.numpy()`` on CPU)
  that ``tape.zero()`` clears after the backward;
* ``tape_rerecorded`` (harness/measure/tape_sessions.py): one ``wp.Tape``
  recorded again without ``reset()``, so its backward replays the launches of
  the previous ``gradient()`` call;
* the source rule ``component_write_after_init`` (harness/rules/kernel_rules.py):
  a component of a local vector written after its constructor gave it a
  non-literal value.

Each has a firing program and quiet near misses. The trace programs live in
``tests/programs/trace_*``; as in tests/test_trace.py the first ``gradient()``
call runs untraced and the second is traced.
"""

from __future__ import annotations

import importlib.util
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest

from defects4warp.engines.evidence import finding_classes

PROGRAMS = Path(__file__).parent / "programs"


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_RUNS: dict = {}


def _traced(name):
    """(trace module, result of call 2, trace of call 2, findings, gradients of calls 1 and 2)."""
    if name not in _RUNS:
        import warp as wp

        wp.config.quiet = True
        from defects4warp.measure import trace as tm

        problem = _load(PROGRAMS / name / "problem.py", f"d4w_{name}").make_problem("cpu", "small")
        first = np.array(problem.gradient()["x"], copy=True)
        result, trace = tm.trace_call(problem.gradient, params=problem.params)
        findings = tm.trace_findings(trace, objective=problem.objective())
        _RUNS[name] = (tm, result, trace, findings, (first, np.array(result["x"], copy=True)))
    return _RUNS[name]


# -- returned view of a .grad buffer ------------------------------------------------------------


def test_memory_range_tells_a_view_from_a_copy():
    import warp as wp

    from defects4warp.measure.aliasing import _overlap, memory_range

    a = wp.array(np.arange(4.0), dtype=wp.float64, device="cpu")
    view, copy = a.numpy(), a.numpy().copy()
    ra = memory_range(a)
    assert ra is not None and ra[1] == 32
    assert _overlap(memory_range(view), ra) and not _overlap(memory_range(copy), ra)
    assert memory_range(view[2:])[0] == ra[0] + 16 and _overlap(memory_range(view[2:]), ra)
    assert memory_range([1.0, 2.0]) is None and memory_range(np.zeros(0)) is None


@pytest.mark.slow
def test_returned_view_cleared_by_tape_zero_fires():
    tm, result, trace, findings, (g1, g2) = _traced("trace_grad_view")
    # what the program returns: all zeros, though the backward wrote 3 x^2 = [3, 12, 0.75]
    assert np.all(g2 == 0.0) and np.all(g1 == 0.0)
    (f,) = [f for f in findings if f["id"] == "returned_grad_overwritten"]
    assert "classes" not in f and finding_classes()[f["id"]] == ["stale_gradient_read"]  # the table names the class
    d = f["data"]
    assert d["param"] == "x" and d["backward_sum"] == pytest.approx(15.75) and d["now_sum"] == 0.0
    kinds = [trace["events"][s]["kind"] for s in d["writes_after_backward"]]
    assert kinds == ["tape_zero"]
    assert trace["aliases"]["x"]["grad_of"] == trace["params"]["x"]


@pytest.mark.slow
def test_returned_copy_is_silent():
    _, result, trace, findings, (g1, g2) = _traced("trace_grad_view_fixed")
    np.testing.assert_allclose(g2, [3.0, 12.0, 0.75])
    assert trace["aliases"] == {}
    assert not [f for f in findings if f["id"] in ("returned_grad_overwritten", "stale_gradient_read")]


# -- a tape recorded again without reset() --------------------------------------------------------


@pytest.mark.slow
def test_tape_recorded_again_without_reset_fires():
    tm, _, trace, findings, (g1, g2) = _traced("trace_rerecord")
    np.testing.assert_allclose(g1, [3.0, 12.0, 0.75])
    np.testing.assert_allclose(g2, 2 * g1)  # call 2 replays call 1's launches too
    (f,) = [f for f in findings if f["id"] == "tape_rerecorded"]
    assert "classes" not in f and finding_classes()[f["id"]] == ["double_count"]  # the table names the class
    d = f["data"]
    assert (d["launches"], d["new"], d["carried"], d["carried_shared"]) == (4, 2, 2, 2)
    assert d["recorded_before_trace"] == 2 and d["earlier_backwards"] == 0
    assert "grad_nonzero_at_backward" not in {x["id"] for x in findings}


@pytest.mark.parametrize("name", ["trace_rerecord_fixed", "trace_rerecord_blocks"])
@pytest.mark.slow
def test_reset_tape_and_two_blocks_before_one_backward_are_silent(name):
    _, _, trace, findings, (g1, g2) = _traced(name)
    np.testing.assert_allclose(g2, [3.0, 12.0, 0.75])
    np.testing.assert_allclose(g1, g2)
    assert not [f for f in findings if f["id"] == "tape_rerecorded"]
    (b,) = [e for e in trace["events"] if e["kind"] == "backward"]
    assert b["sessions"]["carried"] == 0
    assert b["sessions"]["sessions"] == (2 if name.endswith("blocks") else 1)


@pytest.mark.slow
def test_trace_probe_hands_the_problems_own_dict_to_the_trace():
    """The probe used to trace ``ctx.gradient()`` (a flat copy), so no returned-gradient check ever ran."""
    from defects4warp.measure.params import FlatParams
    from defects4warp.probes.trace import traced_call

    problem = _load(PROGRAMS / "trace_grad_view" / "problem.py", "d4w_probe_view").make_problem("cpu", "small")

    class Ctx:
        p, pinned, n_grad, path, doc = problem, False, 0, str(PROGRAMS / "trace_grad_view"), {}
        flat = FlatParams(problem.params)

    ctx = Ctx()
    flat = traced_call(ctx, 1)
    assert flat.shape == (3,) and np.all(flat == 0.0) and ctx.n_grad == 1
    assert ctx.traces[1]["result"]["grads"]["x"]["returned_zero"] is True
    assert ctx.traces[1]["aliases"]["x"]["changed_since_backward"] is True


# -- a component written after its constructor ----------------------------------------------------

#: kernel body after ``a = x[0]`` -> (the rule fires, d/da Warp 1.19.0 computes, the true d/da)
KERNELS = {
    "ctor_then_write": ("v = wp.vec3(2.0 * a, a, 1.0)\nv[0] = 2.0 * a\ny[0] = v[0] + v[1] + v[2]", True, 5.0, 3.0),
    "broadcast_then_write": ("v = wp.vec3(a)\nv[1] = 3.0 * a\ny[0] = v[0] + v[1] + v[2]", True, 6.0, 5.0),
    "swizzle": ("v = wp.vec3(2.0 * a, a, 1.0)\nv.x = 3.0 * a\ny[0] = v[0] + v[1] + v[2]", True, 6.0, 4.0),
    "matrix": ("m = wp.mat22(a, 2.0 * a, 0.0, 1.0)\nm[0, 0] = 3.0 * a\ny[0] = m[0, 0] + m[0, 1] + m[1, 1]",
               True, 6.0, 5.0),
    "quat": ("q = wp.quat(a, 2.0 * a, 0.5, 1.0)\nq[0] = 3.0 * a\ny[0] = q[0] + q[1] + q[2] + q[3]", True, 6.0, 5.0),
    "zero_ctor": ("v = wp.vec3(0.0)\nv[0] = 3.0 * a\ny[0] = v[0] + v[1] + v[2]", False, 3.0, 3.0),
    "literal_component": ("v = wp.vec3(a, 2.0 * a, 0.0)\nv[2] = 3.0 * a\ny[0] = v[0] + v[1] + v[2]", False, 6.0, 6.0),
    "literal_row": ("m = wp.mat22(a, 2.0 * a, 0.0, 1.0)\nm[1] = wp.vec2(3.0 * a, 1.0)\n"
                    "y[0] = m[0, 0] + m[0, 1] + m[1, 0] + m[1, 1]", False, 6.0, 6.0),
    "overwritten_never_read": ("v = wp.vec3(2.0 * a, a, 1.0)\nv[0] = 3.0 * a\ny[0] = v[1] + v[2]", False, 1.0, 1.0),
}


def _source(name):
    body = textwrap.indent(KERNELS[name][0], "    ")
    return ("import warp as wp\n\n\n@wp.kernel\n"
            f"def k_{name}(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n    a = x[0]\n{body}\n")


@pytest.mark.parametrize("name", list(KERNELS))
def test_component_rule_follows_the_measured_adjoint(name):
    from defects4warp import rules as registry

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "problem.py").write_text(_source(name))
        fired = [f for f in registry.scan(d) if f.rule == "component_write_after_init"]
    assert bool(fired) == KERNELS[name][1]
    # the rule fires exactly where Warp's adjoint is wrong
    assert KERNELS[name][1] == (KERNELS[name][2] != KERNELS[name][3])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KERNELS))
def test_component_adjoint_measured(name, tmp_path):
    """The numbers in KERNELS, measured on the installed Warp (1.19.0 here) at a = 0.7."""
    import warp as wp

    wp.config.quiet = True
    path = tmp_path / f"k_{name}.py"
    path.write_text(_source(name))
    k = getattr(_load(path, f"d4w_k_{name}"), f"k_{name}")
    x = wp.array([0.7], dtype=float, requires_grad=True, device="cpu")
    y = wp.zeros(1, dtype=float, requires_grad=True, device="cpu")
    tape = wp.Tape()
    with tape:
        wp.launch(k, 1, inputs=[x, y], device="cpu")
    tape.backward(y)
    assert float(x.grad.numpy()[0]) == pytest.approx(KERNELS[name][2], rel=1e-5)
