"""Tests of the runtime trace (harness/measure/trace.py).

Generated per finding, in the style of scikit-learn's ``parametrize_with_checks``:
``FINDINGS`` is a table of (finding id, program where it must fire, program where
it must not). Every program is a tiny Problem (docs/case-format.md) under
``tests/programs/trace_<name>/``. Each program's ``gradient()`` is called once
untraced (the first iteration, which also builds the kernels) and the second
call is traced, as the engine does: state kept between iterations
(``.grad``, seed buffers) only shows from the second call on.

The table runs in-process on the installed Warp (1.19.0 here), and the
write-after-read, seed and requires_grad rows also on Warp 1.12.1 in a
subprocess of that release's environment (skipped where it has not been
created; ``defects4warp.envs.ensure_env("1.12.1")`` creates it).
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from defects4warp import kernel_access
from defects4warp.engines.evidence import finding_classes
from defects4warp.envs import MARKER, cache_root

PROGRAMS = Path(__file__).parent / "programs"
#: the folder holding the ``defects4warp`` package under test (the trace is a package of three modules:
#: recorder, access analysis, detectors; harness/measure/trace.py re-exports their names)
def _package_root() -> str:
    """A folder holding only a ``defects4warp`` link to this package (works from a checkout whose
    source folder is ``harness/``, from an editable install and from a wheel)."""
    from defects4warp.paths import import_root

    return import_root()

#: (finding id, firing program, non-firing program)
FINDINGS = [
    ("write_after_read", "trace_war", "trace_war_fixed"),
    ("write_after_loss", "trace_after_loss", "trace_after_loss_fixed"),
    ("struct_write_after_read", "trace_struct", "trace_struct_fixed"),
    ("inplace_read_write", "trace_inplace", "trace_inplace_fixed"),
    ("offtape_write_after_read", "trace_offtape", "trace_offtape_fixed"),
    ("missing_requires_grad", "trace_norg", "trace_norg_fixed"),
    ("forward_outside_tape", "trace_scope", "trace_scope_fixed"),
    ("grad_nonzero_at_backward", "trace_nozero", "trace_nozero_fixed"),
    ("grad_nonzero_at_backward", "trace_buffer_nozero", "trace_buffer_nozero_fixed"),
    ("stale_gradient_read", "trace_stale", "trace_stale_fixed"),
    ("multiple_backward", "trace_twice", "trace_twice_fixed"),
    ("duplicate_launch", "trace_dup", "trace_dup_fixed"),
    ("seed_scale", "trace_seed_mean", "trace_seed_mean_fixed"),
    ("seed_accumulated", "trace_seed_acc", "trace_seed_acc_fixed"),
    ("backward_disabled", "trace_nobackward", "trace_nobackward_fixed"),
    ("window_handoff", "trace_windows", "trace_windows_fixed"),
    ("window_handoff", "trace_checkpoint_nocarry", "trace_checkpoint"),
    ("zero_seed", "trace_seed_attach", "trace_seed_attach_fixed"),
    ("rng_state_overwrite", "trace_rng", "trace_rng_fixed"),
]

#: rows also checked on Warp 1.12.1
LEGACY_ROWS = {"write_after_read", "write_after_loss", "struct_write_after_read", "inplace_read_write",
               "offtape_write_after_read", "missing_requires_grad", "seed_scale", "seed_accumulated"}

#: measured facts of the firing programs, checked on top of the ids: finding id -> {data key: value}
#: firing program -> {data key: measured value}
EXPECTED_DATA = {
    # a = 2x = [3, -4, 1] overwritten with ones: two of the three elements read change
    "trace_war": {"kernel": "square", "writer_kind": "launch", "count": 1, "changed_elements": 2},
    "trace_after_loss": {"kernel": "square", "writer_kind": "launch", "count": 1, "changed_elements": 2},
    "trace_struct": {"field": "s.q", "kernel": "energy", "count": 1, "changed_elements": 2},
    "trace_inplace": {"kernel": "square_limit", "inplace": True, "changed_elements": 3},
    "trace_offtape": {"kernel": "square", "writer_kind": "host", "changed_elements": 3},
    "trace_seed_mean": {"constant": 1.0, "size": 4, "reduction": "mean", "factor": 4.0},
    "trace_seed_acc": {"prior_sum": 4.0, "constant": 2.0, "factor": 2.0},
    "trace_dup": {"kernel": "square_sum"},
    # the finding cites the off-tape wp.launch call (problem.py:56), not the kernel's @wp.kernel line (5)
    "trace_scope": {"kernel": "double", "record_tape": True, "active_tape": None, "launch_site": "problem.py:56"},
    "trace_windows": {"tape": "T1", "other_tape": "T0"},
    "trace_nozero": {"param": "x"},
    "trace_buffer_nozero": {"arrays": ["A3"]},
    "trace_twice": {"param": "x"},
    "trace_stale": {"param": "x"},
    "trace_nobackward": {"kernel": "cube_sum"},
    "trace_seed_attach": {"modes": ["preset"]},
    "trace_rng": {"kernel": "noisy_step", "inplace": False, "writer_kind": "launch"},
}


def _load_trace():
    from defects4warp.measure import trace

    return trace


_RUNS: dict = {}


def _run(name, **kw):
    """(trace module, problem, trace, findings) of the traced second gradient() call of a program."""
    key = (name, tuple(sorted(kw.items())))
    if key not in _RUNS:
        import warp as wp

        wp.config.quiet = True
        tm = _load_trace()
        spec = importlib.util.spec_from_file_location(f"d4w_{name}", PROGRAMS / name / "problem.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        problem = mod.make_problem("cpu", "small")
        problem.gradient()
        result, trace = tm.trace_call(problem.gradient, params=problem.params, **kw)
        findings = tm.trace_findings(trace, objective=problem.objective())
        _RUNS[key] = (tm, problem, result, trace, findings)
    return _RUNS[key]


#: correct programs that exercise patterns a naive tracker mistakes for bugs
ALSO_SILENT = ["trace_clean", "trace_trajectory"]

ROW_IDS = [f"{r[0]}-{r[1]}" for r in FINDINGS]


@pytest.mark.slow
@pytest.mark.parametrize("fid,fires,_silent", FINDINGS, ids=ROW_IDS)
def test_finding_fires(fid, fires, _silent):
    tm, _, _, trace, findings = _run(fires)
    assert [f["id"] for f in findings] == [fid]
    f = findings[0]
    assert "classes" not in f and finding_classes()[fid]  # the classes are the evidence table's
    assert isinstance(f["detail"], str) and f["detail"]
    # the text names arrays as the program does (param, kernel.arg), never by the trace's labels A0, A1, ...
    assert not re.search(r"\bA\d+\b", f["detail"]), f["detail"]
    for k, v in EXPECTED_DATA.get(fires, {}).items():
        assert f["data"][k] == pytest.approx(v) if isinstance(v, float) else f["data"][k] == v, (k, f["data"])
    json.dumps(trace)  # the document is JSON-serialisable
    assert trace["trace_errors"] == [] and trace["error"] is None


@pytest.mark.slow
def test_a_failing_recorder_does_not_break_the_program(monkeypatch):
    """Recording that raises is noted in trace_errors; the user's launches still run."""
    import numpy as np

    tm, problem, result, _, _ = _run("trace_clean")

    def broken(*a, **k):
        raise KeyError("recorder")

    from defects4warp.measure.trace_state import _Recorder

    monkeypatch.setattr(_Recorder, "begin_launch", broken)
    again, trace = tm.trace_call(problem.gradient, params=problem.params)
    assert np.array_equal(again["x"], result["x"])
    assert trace["trace_errors"][0] == "launch: KeyError: 'recorder'"
    assert not any(e["kind"] == "launch" for e in trace["events"])


@pytest.mark.slow
@pytest.mark.parametrize("fid,_fires,silent", FINDINGS, ids=ROW_IDS)
def test_finding_silent(fid, _fires, silent):
    *_, findings = _run(silent)
    assert findings == []


@pytest.mark.slow
@pytest.mark.parametrize("name", ALSO_SILENT)
def test_correct_patterns_are_silent(name):
    *_, findings = _run(name)
    assert findings == []


@pytest.mark.slow
def test_without_contents_the_trajectory_looks_overwritten():
    """digests=False drops snapshots and digests: write events alone then flag the time-indexed
    trajectory (each step writes the array an earlier step read), which contents clear."""
    *_, findings = _run("trace_trajectory", digests=False)
    assert sorted({f["id"] for f in findings}) == ["write_after_read"]
    *_, findings = _run("trace_trajectory")
    assert findings == []


def _central_fd(problem, h=1e-6):
    import numpy as np

    out = {}
    for k, a in problem.params.items():
        x0 = a.numpy().copy()
        g = np.zeros_like(x0)
        for i in np.ndindex(x0.shape):
            for sign in (1.0, -1.0):
                x = x0.copy()
                x[i] += sign * h
                a.assign(x)
                g[i] += sign * problem.objective() / (2.0 * h)
        a.assign(x0)
        out[k] = g
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name,buggy", [(r[1], True) for r in FINDINGS] + [(r[2], False) for r in FINDINGS]
                         + [(n, False) for n in ALSO_SILENT])
def test_programs_are_what_the_table_says(name, buggy):
    """Each firing program's gradient really disagrees with central FD (float64, h = 1e-6) on its
    second call, and each silent one agrees (rtol 1e-4): the table is about real bugs."""
    import numpy as np

    _, problem, result, _, _ = _run(name)
    fd = _central_fd(problem)
    agree = all(np.allclose(result[k], fd[k], rtol=1e-4, atol=1e-4 * float(np.max(np.abs(fd[k]))))
                for k in fd)
    assert agree is not buggy, (result, fd)


@pytest.mark.slow
def test_training_style_program_is_silent():
    """Fresh tape per call, x.grad.zero_(), NumPy random data, an off-path counter kernel."""
    _, problem, result, trace, findings = _run("trace_clean")
    assert findings == []
    kinds = [e["kind"] for e in trace["events"]]
    assert kinds.count("launch") == 3 and kinds.count("backward") == 1
    counter = next(e for e in trace["events"] if e["kind"] == "launch" and e["kernel"] == "count_large")
    assert counter["tape"] is None and counter["reads"] == [trace["params"]["x"]]
    zero = [e for e in trace["events"] if e["kind"] == "host" and e["op"] == "zero_"
            and trace["arrays"][e["dest"]]["grad_of"] == trace["params"]["x"]]
    assert len(zero) == 1
    assert trace["result"]["grads"]["x"]["matches_backward"] == 0


@pytest.mark.slow
def test_recorded_facts_of_the_overwrite_program():
    """Launch order, tape, after-loss flags, seeds and digests of trace_after_loss, as measured."""
    _, problem, result, trace, _ = _run("trace_after_loss")
    launches = [e for e in trace["events"] if e["kind"] == "launch"]
    assert [e["kernel"] for e in launches] == ["double", "square", "total", "reset"]
    assert all(e["tape"] == "T0" and e["epoch"] == 0 for e in launches)
    assert [e["after_loss"] for e in launches] == [False, False, False, True]
    (bw,) = [e for e in trace["events"] if e["kind"] == "backward"]
    (seed,) = bw["seeds"]
    # x = [1.5, -2, 0.5], a = 2x, loss = sum(a^2) = 4 * 6.5 = 26
    assert seed["mode"] == "loss" and seed["all_ones"] and seed["target_sum"] == pytest.approx(26.0)
    a = launches[1]["args"][0]["array"]
    assert launches[1]["args"][0]["pre"]["sum"] == pytest.approx(0.0)  # a = 2x = [3, -4, 1]
    assert launches[1]["args"][0]["pre"]["digest"] != bw["pre"][a]["digest"]
    assert bw["pre"][a]["sum"] == pytest.approx(3.0)  # reset wrote ones
    assert bw["writers"][a] == [{"event": launches[3]["seq"], "by": "recorded launch"}]
    assert bw["read_changes"][str(launches[1]["seq"])][a] == {
        "changed": 2, "changed_set_before": 2, "read": 3, "self_overlap": False}
    # the replay reads the ones: d/dx sum((2x)^2) replayed at a = 1 is 2 * 2 * 1 = 4 per element
    assert result["x"].tolist() == pytest.approx([4.0, 4.0, 4.0])
    assert bw["grad_nonzero"][trace["params"]["x"]] is False


@pytest.mark.slow
def test_offtape_writer_is_the_host_call():
    _, _, _, trace, findings = _run("trace_offtape")
    (bw,) = [e for e in trace["events"] if e["kind"] == "backward"]
    (fill,) = [e for e in trace["events"] if e["kind"] == "host" and e["op"] == "fill_" and e["value"] == 7.0]
    assert fill["active_tape"] is None and fill["tape"] is None and fill["post"]["sum"] == pytest.approx(21.0)
    assert bw["writers"][fill["dest"]] == [{"event": fill["seq"], "by": "host call"}]
    assert findings[0]["data"]["writers"] == [fill["seq"]]


@pytest.mark.slow
def test_missing_requires_grad_names_the_intermediate():
    _, _, _, trace, findings = _run("trace_norg")
    (f,) = findings
    (a,) = f["data"]["arrays"]
    assert trace["arrays"][a]["requires_grad"] is False and trace["arrays"][a]["shape"] == [3]
    assert "double.a" in f["detail"]


@pytest.mark.slow
def test_coverage_of_the_call():
    _, problem, _, trace, _ = _run("trace_clean", coverage_root=str(PROGRAMS / "trace_clean"))
    src = str((PROGRAMS / "trace_clean" / "problem.py").resolve())
    lines = trace["coverage"][src]
    text = (PROGRAMS / "trace_clean" / "problem.py").read_text().splitlines()
    body = [i + 1 for i, t in enumerate(text) if "self.x.grad.zero_()" in t or "tape.backward(loss)" in t]
    assert set(body) <= set(lines)
    objective_line = next(i + 1 for i, t in enumerate(text) if "def objective" in t)
    assert objective_line + 1 not in lines  # objective() did not run in this call
    span = trace["kernels"]["predict"]["lines"]
    assert set(range(span[0], span[1] + 1)) <= set(lines)  # a launched kernel counts as ran
    names = {f["name"] for f in trace["functions"]}
    assert {"Problem.gradient", "Problem._batch"} <= names


@pytest.mark.slow
def test_everything_is_restored_even_on_exceptions():
    import warp as wp

    tm = _load_trace()
    tracer = sys.gettrace()
    before = (wp.launch, wp.copy, wp.clone, dict(wp.Tape.__dict__), wp.array.__dict__["grad"],
              wp.array.__dict__["zero_"], wp.array.__dict__["assign"], wp.array.__dict__["numpy"])

    def boom():
        wp.zeros(2).zero_()
        raise ValueError("boom")

    with pytest.raises(ValueError) as info:
        tm.trace_call(boom)
    assert info.value.trace["error"] == "ValueError: boom"
    assert [e["op"] for e in info.value.trace["events"] if e["kind"] == "host"][-1] == "zero_"
    result, doc = tm.trace_call(boom, reraise=False)
    assert result is None and doc["error"] == "ValueError: boom"
    after = (wp.launch, wp.copy, wp.clone, dict(wp.Tape.__dict__), wp.array.__dict__["grad"],
             wp.array.__dict__["zero_"], wp.array.__dict__["assign"], wp.array.__dict__["numpy"])
    assert after == before
    assert sys.gettrace() is tracer


def test_kernel_source_analysis():
    """Reads, stores and accumulations from a kernel's AST, through aliases, struct fields and wp.func."""
    src = textwrap.dedent(
        '''
        def helper(dst, v):
            dst[0] = v

        class _F:
            func = staticmethod(helper)

        helper_func = _F()

        def kern(a, b, c, s, out, n):
            i = 0
            alias = c
            b[i] = a[i] * a[i]
            a[i] = 0.0
            alias[i] += 1.0
            atomic_add(out, 0, s.q[i] + float(len(n)))
            s.f[i].x = 2.0
            helper_func(n, b[i])
        '''
    )
    # inspect.getsource needs a file: analyse through a module written to disk
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "kmod.py"
        f.write_text(src)
        spec = importlib.util.spec_from_file_location("kmod_trace_test", f)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        acc = kernel_access._analyse_function(m.kern)
    assert acc["a"] == {"reads": True, "writes": True, "accumulates": False}
    assert acc["b"] == {"reads": True, "writes": True, "accumulates": False}
    assert acc["c"] == {"reads": False, "writes": True, "accumulates": True}
    assert acc["out"] == {"reads": False, "writes": True, "accumulates": True}
    assert acc["s.q"] == {"reads": True, "writes": False, "accumulates": False}
    assert acc["s.f"] == {"reads": False, "writes": True, "accumulates": False}
    assert acc["n"]["writes"] is True and acc["n"]["reads"] is False


def test_element_masks_of_a_time_indexed_kernel(tmp_path):
    """``v[t + 1, b] = v[t, b] + ...`` reads row t and stores row t + 1; a re-read of a stored
    element is not a read of old contents."""
    import numpy as np

    f = tmp_path / "kmod2.py"
    f.write_text(textwrap.dedent(
        '''
        def step(z, v, t, dt):
            b = tid()
            v[t + 1, b] = v[t, b] + dt
            z[t + 1, b] = z[t, b] + dt * v[t + 1, b]
            z[0, b] = z[t, 2 * b]
        '''))
    spec = importlib.util.spec_from_file_location("kmod2_trace_test", f)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    info = kernel_access._index_info(m.step)
    assert info["tids"] == {"b": 0}
    scal = {"t": 2}
    rv = kernel_access._access_mask([5, 3], [3], info["reads"]["v"], info["tids"], scal, info["locals"])
    wv = kernel_access._access_mask([5, 3], [3], info["writes"]["v"], info["tids"], scal, info["locals"])
    assert np.argwhere(rv.any(axis=1)).ravel().tolist() == [2]
    assert np.argwhere(wv.any(axis=1)).ravel().tolist() == [3]
    rz = kernel_access._access_mask([5, 3], [3], info["reads"]["z"], info["tids"], scal, info["locals"])
    assert rz[2].all() and not rz[[0, 1, 3, 4]].any()  # z[t, 2 * b] is not evaluable: row t, every column


def test_values_the_adjoint_needs(tmp_path):
    """Affine use with constant coefficients needs no value; products with active values,
    nonlinear functions, branches and indices do."""
    f = tmp_path / "kmod3.py"
    f.write_text(textwrap.dedent(
        '''
        def step(x, v, k, m, idx, dt, x_out, v_out):
            i = tid()
            f = k[i] * (x[i + 1] - x[i])
            vn = v[i] + dt * f / m[i]
            v_out[i] = vn
            x_out[i] = x[i] + dt * vn + sin(v[idx[i]])
        '''))
    spec = importlib.util.spec_from_file_location("kmod3_trace_test", f)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    base = {"x", "v", "x_out", "v_out"}
    assert kernel_access._values_needed(m.step, base) == {"k", "m", "v", "idx"}  # sin(v[..]) needs v
    assert kernel_access._values_needed(m.step, base | {"k"}) == {"k", "m", "v", "idx", "x"}  # k * x: x needed
    assert kernel_access._values_needed(m.step, {"x_out", "v_out"}) == {"idx"}  # nothing active: only the index


def test_findings_are_empty_for_an_empty_trace():
    tm = _load_trace()
    doc = {"events": [], "arrays": {}, "kernels": {}, "params": {"x": "A0"}, "digests": True,
           "result": {"grads": None}}
    assert tm.trace_findings(doc, objective=1.0) == []


_LEGACY_SCRIPT = r"""
import importlib.util, json, sys
sys.path.insert(0, sys.argv[1])
from defects4warp.measure import trace as tm
import warp as wp
wp.config.quiet = True
out = {}
for path in sys.argv[2:]:
    name = path.rstrip("/").split("/")[-1]
    spec = importlib.util.spec_from_file_location("p_" + name, path + "/problem.py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    p = m.make_problem("cpu", "small")
    p.gradient()
    _, trace = tm.trace_call(p.gradient, params=p.params)
    out[name] = [f["id"] for f in tm.trace_findings(trace, objective=p.objective())]
    json.dumps(trace)
print("RESULT " + json.dumps({"warp": wp.config.version, "ids": out}))
"""


@pytest.mark.slow
def test_findings_on_warp_1_12_1():
    env = cache_root() / "warp-1.12.1"
    if not (env / MARKER).exists():
        pytest.skip("the Warp 1.12.1 environment has not been created (defects4warp.envs.ensure_env)")
    rows = [r for r in FINDINGS if r[0] in LEGACY_ROWS]
    names = [n for r in rows for n in r[1:]] + ["trace_clean"]
    proc = subprocess.run(
        [str(env / "bin" / "python"), "-c", _LEGACY_SCRIPT, _package_root()] + [str(PROGRAMS / n) for n in names],
        capture_output=True, text=True, timeout=900,
    )
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
    assert line is not None, proc.stderr[-3000:]
    res = json.loads(line[len("RESULT "):])
    assert res["warp"] == "1.12.1"
    expected = {fires: [fid] for fid, fires, _ in rows}
    expected.update({silent: [] for _, _, silent in rows})
    expected["trace_clean"] = []
    assert res["ids"] == expected


def test_restoring_a_patched_new_on_a_class_without_one_keeps_its_constructor_working():
    from defects4warp.measure.trace import restore_patches

    class Plain:
        def __init__(self, x=None):
            self.x = x

    def patched(cls, *args, **kwargs):
        return object.__new__(cls)

    Plain.__new__ = patched
    restore_patches([(Plain, "__new__", None, False)])
    # deleting the patch alone leaves CPython calling object.__new__ with the arguments (a TypeError)
    assert Plain(3).x == 3 and Plain(x=4).x == 4

    class Base:
        def __new__(cls, *args, **kwargs):
            obj = object.__new__(cls)
            obj.made_by_base = True
            return obj

    class Child(Base):
        def __init__(self, x=None):
            self.x = x

    Child.__new__ = patched
    restore_patches([(Child, "__new__", None, False)])
    c = Child(5)
    assert c.x == 5 and c.made_by_base


def test_values_are_not_read_while_a_cuda_graph_is_captured():
    """Reading an array during ``wp.ScopedCapture`` (a device-to-host copy) invalidates the capture (CUDA
    error 901, seen on an H200 with two of Warp's own examples, 2026-12-04): the trace keeps the event and
    drops its values. Stand-ins for the array's device; a CPU array's values are read."""
    import numpy as np
    import warp as wp

    from defects4warp.measure.trace_state import _Recorder

    class Dev:
        is_cuda = True

        def __init__(self, capturing):
            self.is_capturing = capturing

    class Arr:
        def __init__(self, capturing):
            self.device = Dev(capturing)
            self.read = 0

        def numpy(self):
            self.read += 1
            return np.ones(3, dtype=np.float32)

    rec = _Recorder({}, True, 1 << 16, 1e-6)
    busy, idle = Arr(True), Arr(False)
    assert rec.summary(busy) is None and rec.contents(busy) is None and busy.read == 0
    assert rec.summary(idle)["sum"] == 3.0 and rec.contents(idle).tolist() == [1.0, 1.0, 1.0] and idle.read == 2
    host = wp.array(np.arange(3, dtype=np.float32), device="cpu")
    assert rec.summary(host)["sum"] == 3.0


def test_each_layer_s_state_is_in_force_from_its_patches_to_their_restore():
    from defects4warp.measure.patches import Patches, active

    class Owner:
        value = 1

    outer_state, inner_state = object(), object()
    assert active("trace") is None and active("capture") is None
    outer = Patches("trace", outer_state)
    outer.patch(Owner, "value", 2)
    inner = Patches("capture", inner_state)
    inner.patch(Owner, "value", 3)
    nested = Patches("trace", inner_state)  # a second install of a layer: the innermost answers
    assert (active("trace"), active("capture"), Owner.value) == (inner_state, inner_state, 3)
    nested.restore()
    assert active("trace") is outer_state
    inner.restore()
    assert (active("capture"), Owner.value) == (None, 2)
    outer.restore()
    assert (active("trace"), Owner.value) == (None, 1)
    Patches().restore()  # without a layer: patches only, nothing put in force
    assert active("trace") is None


def test_a_launch_wrapper_kept_after_the_trace_ended_records_nothing_more():
    import warp as wp

    from defects4warp.measure.patches import active

    @wp.kernel
    def _twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = 2.0 * x[i]

    x = wp.array([1.0, 2.0], dtype=float)
    y = wp.zeros(2, dtype=float)
    kept = []

    def fn():
        kept.append(wp.launch)  # the program keeps the wrapped launch beyond the trace
        wp.launch(_twice, dim=2, inputs=[x], outputs=[y])
        assert active("trace") is not None
        return None

    from defects4warp.measure.trace import trace_call

    _, doc = trace_call(fn)
    n = sum(ev["kind"] == "launch" for ev in doc["events"])
    assert n == 1 and active("trace") is None
    kept[0](_twice, dim=2, inputs=[y], outputs=[x])  # still launches, through the original
    assert x.numpy().tolist() == [4.0, 8.0]
    assert sum(ev["kind"] == "launch" for ev in doc["events"]) == 1
    # and a new trace is not refused
    _, doc2 = trace_call(lambda: wp.launch(_twice, dim=2, inputs=[x], outputs=[y]))
    assert sum(ev["kind"] == "launch" for ev in doc2["events"]) == 1
