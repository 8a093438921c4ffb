"""One generated test per source rule (the model is scikit-learn's
``parametrize_with_checks``): for every rule in the registry
(:data:`defects4warp.rules.REGISTRY`) a tiny Warp program where it must fire, at
the lines marked ``# here``, and a near miss where it must not. Static
analysis only: the snippets are written to ``tmp_path/problem.py`` and parsed,
never run, so these tests take milliseconds and need no Warp.

A rule registered without an entry in :data:`CASES` fails its test."""

import re
import textwrap
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from defects4warp import rules as registry
from defects4warp.taxonomy import CLASSES

HEAD = "import numpy as np\nimport warp as wp\n"

_READ_WRITE_KERNELS = """
@wp.kernel
def read_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i]

@wp.kernel
def write_x(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = 0.0
"""

_STRUCT_KERNELS = """
@wp.struct
class State:
    pos: wp.array(dtype=float)

@wp.kernel
def read_s(s: State, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = s.pos[i]

@wp.kernel
def write_s(s: State):
    i = wp.tid()
    s.pos[i] = 0.0
"""

_SCALE = """
@wp.kernel
def scale(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]
"""

_COUNTER = """
@wp.func
def take(counter: wp.array(dtype=int)):
    return wp.atomic_add(counter, 0, 1)
{replay}
@wp.kernel
def compact(counter: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    slot = take(counter){mark}
    out[slot] = x[i]
"""

_REPLAY = """
@wp.func_replay(take)
def replay_take(counter: wp.array(dtype=int)):
    return counter[0]
"""

#: rule -> (snippet where it fires at the lines marked "# here", near miss where it must not fire)
CASES = {
    "inplace_array_op": ("""
@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] *= 2.0  # here
""", """
@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] += 2.0
"""),
    "nonsmooth_op": ("""
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sqrt(x[i])  # here
""", """
@wp.kernel
def k(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.length(x[i])
"""),
    "piecewise_constant_op": ("""
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.floor(x[i])  # here
""", """
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.abs(x[i])
"""),
    "device_rng": ("""
@wp.kernel
def k(seed: int, y: wp.array(dtype=float)):
    i = wp.tid()
    state = wp.rand_init(seed, i)  # here
    y[i] = wp.randf(state)  # here
""", """
@wp.kernel
def k(noise: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = noise[i]
"""),
    "where_overflow": ("""
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    e = wp.exp(x[i])
    y[i] = wp.where(x[i] < 10.0, e, 0.0)  # here
""", """
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.exp(wp.where(x[i] < 10.0, x[i], 10.0))
"""),
    "atomic_index": (_COUNTER.format(replay="", mark="  # here"), _COUNTER.format(replay=_REPLAY, mark="")),
    "array_component_write": ("""
@wp.kernel
def k(x: wp.array(dtype=wp.vec3), s: float):
    i = wp.tid()
    x[i].y = s  # here
    x[i][2] = s  # here
""", """
@wp.kernel
def k(x: wp.array(dtype=wp.vec3), s: float):
    i = wp.tid()
    v = x[i]
    x[i] = wp.vec3(v[0], s, s)
"""),
    "struct_array_write": (_STRUCT_KERNELS.replace("    s.pos[i] = 0.0", "    s.pos[i] = 0.0  # here"), """
@wp.struct
class State:
    pos: wp.array(dtype=float)

@wp.kernel
def k(s: State, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = s.pos[i]
"""),
    "component_reassign": ("""
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = wp.vec3()
    v[0] = x[i]
    v[0] = v[0] * 2.0  # here
    y[i] = v
""", """
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = wp.vec3(x[i], 0.0, 0.0)
    y[i] = v * 2.0
"""),
    "component_write_after_init": ("""
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = wp.vec3(2.0 * x[i], x[i], 1.0)
    v[0] = 2.0 * x[i]  # here
    y[i] = v
""", """
@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    v = wp.vec3(0.0)
    v[0] = 2.0 * x[i]
    w = wp.vec3(x[i], x[i], 0.0)
    w[2] = 3.0 * x[i]
    y[i] = v + w
"""),
    "kernel_read_write": ("""
@wp.kernel
def k(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 0.5  # here
""", _SCALE),
    "dynamic_loop": ("""
@wp.kernel
def k(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    s = float(1.0)
    for j in range(n):  # here
        s = s * x[i]
    y[i] = s
""", """
N = wp.constant(4)

@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    s = float(1.0)
    for j in range(N):
        s = s * x[i]
    y[i] = s
"""),
    "custom_adjoint": ("""
@wp.func
def f(x: float):
    return x * x

@wp.func_grad(f)
def adj_f(x: float, adj_ret: float):  # here
    wp.adjoint[x] += 2.0 * x * adj_ret
""", """
@wp.func
def f(x: float):
    return x * x
"""),
    "func_grad_assign": ("""
@wp.func
def f(x: float):
    return x * x

@wp.func_grad(f)
def adj_f(x: float, adj_ret: float):
    wp.adjoint[x] = 2.0 * x * adj_ret  # here
""", """
@wp.func
def f(x: float):
    return x * x

@wp.func_grad(f)
def adj_f(x: float, adj_ret: float):
    wp.adjoint[x] += 2.0 * x * adj_ret
"""),
    "func_native_no_adjoint": ("""
snippet = "return x * 2.0;"

@wp.func_native(snippet)
def twice(x: float):  # here
    ...
""", """
snippet = "return x * 2.0;"
adj_snippet = "adj_x += 2.0 * adj_ret;"

@wp.func_native(snippet, adj_snippet)
def twice(x: float):
    ...
"""),
    "backward_disabled": ("""
wp.set_module_options({"enable_backward": False})  # here

@wp.kernel(enable_backward=False)  # here
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    y[wp.tid()] = x[wp.tid()]
""", """
wp.set_module_options({"enable_backward": True})

@wp.kernel(enable_backward=True)
def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    y[wp.tid()] = x[wp.tid()]
"""),
    "host_rng": ("""
class Problem:
    def objective(self):
        noise = np.random.normal(size=4)  # here
        return float(noise.sum())
""", """
class Problem:
    def __init__(self):
        self.noise = np.random.normal(size=4)

    def objective(self):
        rng = np.random.default_rng(7)
        np.random.seed(3)
        return float(self.noise.sum()) + 0.0 * len(str(rng))
"""),
    "grad_buffer_reuse": ("""
class Problem:
    def gradient(self):
        self.loss.grad = self.seed  # here
        self.tape.backward()
""", """
class Problem:
    def gradient(self):
        self.loss.grad = wp.ones(1, dtype=float)
        self.tape.backward()
"""),
    "repeated_backward": ("""
def gradient(tape, loss):
    tape.backward(loss)
    tape.backward(loss)  # here
    tape.zero()
""", """
def gradient(tape, loss):
    tape.backward(loss)
    tape.zero()
"""),
    "backward_in_loop": ("""
def train(tape, loss, n):
    for it in range(n):  # here
        tape.backward(loss)
        tape.zero()
""", """
def train(tape, loss, n):
    for it in range(n):
        tape.zero()
    tape.backward(loss)
"""),
    "tape_per_window": ("""
def windows(n):
    tapes = []
    for w in range(n):  # here
        tapes.append(wp.Tape())
    return tapes
""", """
def windows(n):
    tape = wp.Tape()
    for w in range(n):
        tape.zero()
    return tape
"""),
    "buffer_swap": (_SCALE + """
def step(a, b, n):
    for t in range(n):
        wp.launch(scale, dim=4, inputs=[a], outputs=[b])
        a, b = b, a  # here
""", _SCALE + """
def step(states, n):
    for t in range(n):
        wp.launch(scale, dim=4, inputs=[states[t]], outputs=[states[t + 1]])
"""),
    "copy_on_tape": ("""
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        wp.copy(y, x)  # here
    tape.backward(loss)
    tape.zero()
""", _SCALE + """
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[y])
    tape.backward(loss)
    tape.zero()
"""),
    "mutation_on_tape": (_SCALE + """
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        y.zero_()  # here
        wp.launch(scale, dim=4, inputs=[x], outputs=[y])
    tape.backward(loss)
""", _SCALE + """
def gradient(x, y, loss):
    y.zero_()
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[y])
    tape.backward(loss)
"""),
    "grad_read_before_backward": (_SCALE + """
def gradient(x, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[loss])
    g = x.grad.numpy()  # here
    tape.backward(loss)
    return g
""", _SCALE + """
def gradient(x, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[loss])
    tape.backward(loss)
    return x.grad.numpy()
"""),
    "loss_after_tape": (_SCALE + """
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[y])
    wp.launch(scale, dim=4, inputs=[y], outputs=[loss])  # here
    tape.backward(loss)
""", _SCALE + """
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[y])
        wp.launch(scale, dim=4, inputs=[y], outputs=[loss])
    tape.backward(loss)
"""),
    "launch_after_tape": (_SCALE + """
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[loss])
    wp.launch(scale, dim=4, inputs=[y], outputs=[x])  # here
    tape.backward(loss)
""", _SCALE + """
def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[loss])
    tape.backward(loss)
    wp.launch(scale, dim=4, inputs=[y], outputs=[x])
"""),
    "launch_before_tape": (_SCALE + """
def forward(x, y):
    wp.launch(scale, dim=4, inputs=[x], outputs=[y])
    return y

def gradient(x, y, loss):
    h = forward(x, y)  # here
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[h], outputs=[loss])
    tape.backward(loss)
""", _SCALE + """
def forward(x, y):
    wp.launch(scale, dim=4, inputs=[x], outputs=[y])
    return y

def gradient(x, y, loss):
    tape = wp.Tape()
    with tape:
        h = forward(x, y)
        wp.launch(scale, dim=4, inputs=[h], outputs=[loss])
    tape.backward(loss)
"""),
    "retain_grad": ("""
def make(x):
    x.retain_grad = True  # here
    return x
""", """
def make(x):
    x.requires_grad = True
    return x
"""),
    "array_ptr_alias": ("""
def view(a):
    return wp.array(ptr=a.ptr, dtype=float, shape=a.shape, device=a.device)  # here
""", """
def view(a):
    return wp.clone(a)
"""),
    "no_requires_grad": (_SCALE + """
def make_problem():
    x = wp.zeros(4, dtype=float, requires_grad=True)
    y = wp.zeros(4, dtype=float)  # here
    wp.launch(scale, dim=4, inputs=[x], outputs=[y])
""", _SCALE + """
def make_problem():
    x = wp.zeros(4, dtype=float, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    wp.launch(scale, dim=4, inputs=[x], outputs=[y])
"""),
    "no_grad_zeroing": (_SCALE + """
def gradient(x, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[loss])
    tape.backward(loss)  # here
    return x.grad.numpy()
""", _SCALE + """
def gradient(x, loss):
    tape = wp.Tape()
    with tape:
        wp.launch(scale, dim=4, inputs=[x], outputs=[loss])
    tape.backward(loss)
    g = x.grad.numpy()
    tape.zero()
    return g
"""),
    "static_write_after_read": (_READ_WRITE_KERNELS + """
def step(x, y):
    wp.launch(read_x, dim=4, inputs=[x, y])
    wp.launch(write_x, dim=4, inputs=[x])  # here
""", _READ_WRITE_KERNELS + """
def step(x, y, z):
    wp.launch(read_x, dim=4, inputs=[x, y])
    wp.launch(write_x, dim=4, inputs=[z])
"""),
    "struct_write_after_read": (_STRUCT_KERNELS + """
def step(s, y):
    wp.launch(read_s, dim=4, inputs=[s, y])
    wp.launch(write_s, dim=4, inputs=[s])  # here
""", _STRUCT_KERNELS + """
def step(s, t, y):
    wp.launch(read_s, dim=4, inputs=[s, y])
    wp.launch(write_s, dim=4, inputs=[t])
"""),
    "host_write_after_read": (_READ_WRITE_KERNELS + """
def step(x, y):
    wp.launch(read_x, dim=4, inputs=[x, y])
    x.zero_()  # here
""", _READ_WRITE_KERNELS + """
def step(x, y):
    wp.launch(read_x, dim=4, inputs=[x, y])
    y.zero_()
"""),
    "host_assign_after_read": (_READ_WRITE_KERNELS + """
def step(x, y, values):
    wp.launch(read_x, dim=4, inputs=[x, y])
    x.assign(values)  # here
""", _READ_WRITE_KERNELS + """
def step(x, y, values):
    x.assign(values)
    wp.launch(read_x, dim=4, inputs=[x, y])
"""),
    "write_after_write": ("""
@wp.kernel
def set_a(y: wp.array(dtype=float)):
    y[wp.tid()] = 1.0

@wp.kernel
def set_b(y: wp.array(dtype=float)):
    y[wp.tid()] = 2.0

def step(y):
    wp.launch(set_a, dim=4, inputs=[y])
    wp.launch(set_b, dim=4, inputs=[y])  # here
""", """
@wp.kernel
def set_a(y: wp.array(dtype=float)):
    y[wp.tid()] = 1.0

@wp.kernel
def add_b(y: wp.array(dtype=float)):
    y[wp.tid()] += 2.0

def step(y):
    wp.launch(set_a, dim=4, inputs=[y])
    wp.launch(add_b, dim=4, inputs=[y])
"""),
}


def _write(tmp_path: Path, body: str) -> tuple:
    """Write HEAD + body to tmp_path/problem.py; return the 1-based lines marked '# here'."""
    text = HEAD + textwrap.dedent(body)
    (tmp_path / "problem.py").write_text(text)
    return {i for i, line in enumerate(text.splitlines(), 1) if re.search(r"#\s*here\s*$", line)}


def _lines(tmp_path: Path, name: str) -> set:
    return {f.line for f in registry.scan(tmp_path) if f.rule == name and f.file == "problem.py"}


def _case(name):
    if name not in CASES:
        pytest.fail(f"rule {name!r} is registered but has no (fires, clean) entry in tests/test_rules.py CASES")
    return CASES[name]


@pytest.mark.parametrize("name", list(registry.REGISTRY))
def test_rule_fires_at_marked_lines(name, tmp_path):
    fires, _ = _case(name)
    marked = _write(tmp_path, fires)
    assert marked, f"the firing snippet of {name} marks no line"
    assert _lines(tmp_path, name) == marked


@pytest.mark.parametrize("name", list(registry.REGISTRY))
def test_rule_silent_on_near_miss(name, tmp_path):
    _, clean = _case(name)
    assert not _write(tmp_path, clean)
    assert _lines(tmp_path, name) == set()


def test_table_has_no_unregistered_rules():
    assert set(CASES) == set(registry.REGISTRY)


@pytest.mark.parametrize("name", list(registry.REGISTRY))
def test_rule_declaration(name):
    r = registry.REGISTRY[name]
    assert r.classes and set(r.classes) <= set(CLASSES), f"{name}: unknown classes {set(r.classes) - set(CLASSES)}"
    assert 0.0 <= r.specificity <= 1.0
    assert r.summary
    if r.gate is not None:
        SpecifierSet(r.gate)  # raises InvalidSpecifier for a malformed gate


def test_finding_fields_and_scope(tmp_path):
    _write(tmp_path, CASES["inplace_array_op"][0])
    (f,) = [f for f in registry.scan(tmp_path) if f.rule == "inplace_array_op"]
    assert (f.file, f.line, f.scope, f.classes) == ("problem.py", 7, "k", ("inplace_math",))
    assert f.detail == "'x[i] *= ...' in kernel k"
    assert f.to_dict()["classes"] == ["inplace_math"]


def test_scan_selected_rules(tmp_path):
    _write(tmp_path, CASES["kernel_read_write"][0])
    assert {f.rule for f in registry.scan(tmp_path)} == {"kernel_read_write"}
    assert registry.scan(tmp_path, rules=["nonsmooth_op"]) == []
    with pytest.raises(KeyError):
        registry.scan(tmp_path, rules=["no_such_rule"])


def test_unparsable_file_is_skipped(tmp_path):
    (tmp_path / "broken.py").write_text("def (:\n")
    _write(tmp_path, CASES["nonsmooth_op"][0])
    assert [(f.file, f.rule) for f in registry.scan(tmp_path)] == [("problem.py", "nonsmooth_op")]


def test_registry_tables_and_release_gates():
    from defects4warp.engines.assess import source as probe

    assert registry.classes_of() == {n: r.classes for n, r in registry.REGISTRY.items()}
    spec = registry.specificities()
    assert spec["nonsmooth_op"] == 0.1 and spec["inplace_array_op"] == registry.DEFAULT_SPECIFICITY
    assert {n: str(s) for n, s in probe.RELEASE_GATES.items()} == {
        "array_component_write": "<1.14", "copy_on_tape": "<1.17", "grad_buffer_reuse": ">=1.13",
        "component_reassign": ">=1.7.2", "component_write_after_init": ">=1.7.2"}
    # a reassigned local component is right on 1.4.2-1.6.2 and has no adjoint at all before (Warp's defect)
    assert not probe.release_ok("component_reassign", "1.6.2") and probe.release_ok("component_reassign", "1.7.2")
    assert probe.release_ok("array_component_write", "1.13.0") and not probe.release_ok("array_component_write", "1.14.0")
    assert not probe.release_ok("grad_buffer_reuse", "1.12.1") and probe.release_ok("grad_buffer_reuse", "1.19.0")
    assert len(probe.OBSERVED_RULES) == 17 and "no_grad_zeroing" in probe.OBSERVED_RULES
    assert "inplace_array_op" not in probe.OBSERVED_RULES


def test_decorator_rejects_bad_declarations():
    with pytest.raises(ValueError, match="twice"):
        registry.rule("nonsmooth_op", classes=("nonsmooth_nan",))(lambda unit: [])
    with pytest.raises(ValueError, match="outside"):
        registry.rule("x_heavy", specificity=1.5)
    assert "x_heavy" not in registry.REGISTRY


def test_rule_classes_are_the_evidence_tables():
    """A rule declares its evidence id only; its classes are the table's rows for it, in row order
    (a rule without rows has none, which test_rule_declaration refuses for every registered rule)."""
    from defects4warp.evidence_table import EvidenceTable

    r = registry.REGISTRY["backward_in_loop"]
    assert r.evidence == "rule:backward_in_loop" and r.classes == ("truncation", "missing_tape_zero")
    assert registry.REGISTRY["nonsmooth_op"].classes == ("nonsmooth_nan", "nonsmooth_tie")
    unregistered = registry.Rule("x_unlisted", 0.5, None, False, "", lambda unit: [])
    assert unregistered.classes == ()
    from defects4warp.evidence_table import evidence_classes

    t = EvidenceTable(rows={"rule:x": {"b": 1.0, "*": 0.5, "a": 2.0}})
    assert evidence_classes("rule:x", t) == ("b", "a")


def test_docs_table_matches_registry():
    text = (Path(__file__).resolve().parents[1] / "docs" / "engines.md").read_text()
    m = re.search(r"<!-- rules-table -->\n(.*?)\n<!-- /rules-table -->", text, re.S)
    assert m, "docs/engines.md has no generated rules table"
    assert m.group(1) == registry.registry_table(), "regenerate with: defects4warp maint rules --write docs/engines.md"


# --- func_native_no_adjoint: an adj_snippet that leaves some adj_<arg> unwritten ----------------

PARTIAL_NATIVE = '''
FWD = "return a * b + float(n);"
ADJ = """
    // adj_b is not needed here
    adj_a += b * adj_ret;
"""

@wp.func_native(FWD, ADJ)
def mul(a: float, b: wp.float32, n: int) -> float:  # here
    ...
'''

NATIVE_NEAR_MISSES = {
    # every float argument the snippet reads gets its adj_; the int one needs none
    "complete": '''
FWD = "return a * b + float(n);"
ADJ = "adj_a += b * adj_ret; adj_b += a * adj_ret;"

@wp.func_native(FWD, ADJ)
def mul(a: float, b: wp.float32, n: int) -> float:
    ...
''',
    # b is not read by the forward snippet: a zero adjoint for it is right
    "unread": '''
@wp.func_native(snippet="return 2.0 * a;", adj_snippet="adj_a += 2.0 * adj_ret;")
def twice(a: float, b: float) -> float:
    ...
''',
    # t is only compared (a threshold): its derivative is zero wherever it exists
    "threshold": '''
@wp.func_native(snippet="return x > t ? x : 0.0f;", adj_snippet="if (x > t) { adj_x += adj_ret; }")
def relu_at(x: float, t: float) -> float:
    ...
''',
    # the adjoint snippet is built at run time: not judged statically
    "computed": '''
FWD = "return a * b;"

@wp.func_native(FWD, "adj_a += b * adj_ret;" + EXTRA)
def mul(a: float, b: float) -> float:
    ...
''',
}


THRESHOLD_AND_VALUE = '''
@wp.func_native(snippet="return x > t ? x * t : 0.0f;", adj_snippet="if (x > t) { adj_x += t * adj_ret; }")
def gated(x: float, t: float) -> float:  # here
    ...
'''


def test_func_native_compared_and_used_still_fires(tmp_path):
    """t is compared AND multiplied: its adjoint is not zero, so leaving adj_t unwritten is reported."""
    marked = _write(tmp_path, THRESHOLD_AND_VALUE)
    assert _lines(tmp_path, "func_native_no_adjoint") == marked


def test_func_native_partial_adjoint_fires(tmp_path):
    marked = _write(tmp_path, PARTIAL_NATIVE)
    (f,) = [f for f in registry.scan(tmp_path) if f.rule == "func_native_no_adjoint"]
    assert {f.line} == marked
    # the comment naming adj_b does not count as writing it; the int argument n needs no adjoint
    assert f.detail == "the adj_snippet of @wp.func_native mul never writes adj_b (b read by the snippet)"
    assert f.classes == ("native_no_adjoint",)


@pytest.mark.parametrize("which", sorted(NATIVE_NEAR_MISSES))
def test_func_native_partial_adjoint_near_misses(which, tmp_path):
    _write(tmp_path, NATIVE_NEAR_MISSES[which])
    assert _lines(tmp_path, "func_native_no_adjoint") == set()


#: Runtime-bound loops whose carried state is integer: nothing for a loop
#: adjoint to replay (the factorial is Warp's own
#: warp/examples/optim/example_navier_stokes_perturbation.py).
INT_LOOP_NEAR_MISSES = {
    "factorial": '''
@wp.func
def factorial(n: int) -> int:
    result = int(1)
    for i in range(2, n + 1):
        result *= i
    return result

@wp.kernel
def k(x: wp.array(dtype=float), s: int, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] / float(factorial(s))
''',
    "index_search": '''
@wp.kernel
def k(edges: wp.array(dtype=float), n: int, x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    lo = int(0)
    j = int(0)
    while j < n:
        if edges[j] > x[i]:
            break
        lo = j
        j = j + 1
    y[i] = x[i] * edges[lo]
''',
}

#: The same shapes with float state carried: they still fire.
INT_LOOP_STILL_FIRES = {
    "int_and_float": '''
@wp.kernel
def k(x: wp.array(dtype=float), n: int, y: wp.array(dtype=float)):
    i = wp.tid()
    c = int(0)
    s = float(1.0)
    for j in range(n):  # here
        c = c * 2
        s = s * x[i]
    y[i] = s + float(c)
''',
    "float_param_carried": '''
@wp.func
def f(v: float, n: int):
    for j in range(n):  # here
        v = v * v
    return v
''',
}


@pytest.mark.parametrize("which", sorted(INT_LOOP_NEAR_MISSES))
def test_dynamic_loop_silent_on_integer_state(which, tmp_path):
    _write(tmp_path, INT_LOOP_NEAR_MISSES[which])
    assert _lines(tmp_path, "dynamic_loop") == set()


@pytest.mark.parametrize("which", sorted(INT_LOOP_STILL_FIRES))
def test_dynamic_loop_fires_on_float_state_next_to_integers(which, tmp_path):
    marked = _write(tmp_path, INT_LOOP_STILL_FIRES[which])
    assert _lines(tmp_path, "dynamic_loop") == marked


def test_int_locals_fixpoint():
    import ast as _ast
    from defects4warp.rules._ast import int_locals
    fn = _ast.parse('''
def k(a: int, b: float, c):
    i, j = wp.tid()
    r = int(1)
    r = r * i
    f = r + 1.0
    g = a
    g = g + c
    h = a // 2 if a > 0 else -a
    for t in range(a):
        r = r + t
''').body[0]
    assert int_locals(fn) == {"a", "i", "j", "r", "h", "t"}


def test_a_kernel_header_covered_at_import_did_not_run(tmp_path):
    """A finding on a kernel's decorator line (enable_backward=False) counts only if the kernel was launched
    during gradient(): Python covers the header whenever the module loads (Warp's example_spring_cage.py: an
    update kernel launched after the backward, outside the tape)."""
    from defects4warp.engines.assess import source as probe

    src = ("import warp as wp\n\n\n"
           "@wp.kernel(enable_backward=False)\n"
           "def upd(x: wp.array(dtype=float), g: wp.array(dtype=float)):\n"
           "    i = wp.tid()\n"
           "    x[i] = x[i] - 0.1 * g[i]\n\n\n"
           "@wp.kernel\n"
           "def sq(x: wp.array(dtype=float), loss: wp.array(dtype=float)):\n"
           "    i = wp.tid()\n"
           "    wp.atomic_add(loss, 0, x[i] * x[i])\n")
    (tmp_path / "train.py").write_text(src)
    header = list(range(1, 6)) + list(range(10, 12))  # lines Python runs when it loads the module
    doc = {"trace": {"coverage": {"files": {"train.py": header}}, "kernels": ["sq"], "findings": []}}
    findings, ran, available = probe.scan(tmp_path, doc)
    (f,) = [f for f in findings if f["rule"] == "backward_disabled"]
    assert available and (f["line"], f["scope"]) == (4, "upd")
    assert f not in ran
    doc["trace"]["kernels"] = ["sq", "upd"]
    assert f in probe.scan(tmp_path, doc)[1]


def test_an_adjoint_pattern_in_a_kernel_no_tape_recorded_is_not_counted(tmp_path):
    """An optimiser's update kernel reads and writes its param (``p[i] = p[i] - lr * g[i]``) and runs inside a
    captured script's gradient() call after the backward, outside any tape: its adjoint never runs, so its
    kernel_read_write finding is reported, not counted. The same kernel recorded on a tape counts; without the
    launches probe's list of recorded kernels nothing is known to be off tape and it counts as before."""
    from defects4warp.engines.assess import source as probe
    from defects4warp.engines.assess import AssessContext

    assert set(probe.ADJOINT_RULES) <= set(registry.REGISTRY)
    assert not set(probe.ADJOINT_RULES) & {"piecewise_constant_op", "device_rng", "nonsmooth_op"}
    src = ("import warp as wp\n\n\n"
           "@wp.kernel\n"
           "def upd(p: wp.array(dtype=float), g: wp.array(dtype=float)):\n"
           "    i = wp.tid()\n"
           "    p[i] = p[i] - 0.1 * g[i]\n\n\n"
           "@wp.kernel\n"
           "def sq(x: wp.array(dtype=float), loss: wp.array(dtype=float)):\n"
           "    i = wp.tid()\n"
           "    wp.atomic_add(loss, 0, x[i] * x[i])\n")
    (tmp_path / "train.py").write_text(src)
    doc = {"trace": {"coverage": {"files": {"train.py": [1, 4, 5, 10, 11]}}, "kernels": ["sq", "upd"], "findings": []},
           "launches": {"kernels": [{"kernel": "sq", "launches": 1}], "recorded": 1}}
    assert probe.off_tape_kernels(doc) == {"upd"}

    def read(d):
        a = probe.assess(d, AssessContext(path=tmp_path, warp_version="1.19.0"))
        (e,) = [e for e in a.evidence if "reads and writes array 'p'" in e["finding"]]
        return e, a.facts["rules"]

    e, counted = read(doc)
    assert e["finding"].endswith("(kernel upd ran outside any tape: its adjoint never ran)")
    assert e["data"]["counted"] is False and "kernel_read_write" not in counted
    doc["launches"]["kernels"].append({"kernel": "upd_3f2a9c1b", "launches": 1})  # Warp's hash suffix stripped
    assert probe.off_tape_kernels(doc) == set()
    e, counted = read(doc)
    assert e["data"]["counted"] is True and "kernel_read_write" in counted
    del doc["launches"]
    e, counted = read(doc)
    assert e["data"]["counted"] is True and "kernel_read_write" in counted


#: Integer state that decides where a loop writes (measured wrong on Warp 1.19.0 by a reviewer:
#: tape [0,0,24,16,14,0,12] vs [0,4,18,16,0,0,56] for the first): still a dynamic loop.
INT_INDEX_STILL_FIRES = {
    "strided_index": '''
@wp.kernel
def k(x: wp.array(dtype=float), n: int, m: int, loss: wp.array(dtype=float)):
    j = int(1)
    for i in range(n):  # here
        wp.atomic_add(loss, 0, x[j] * x[j] * float(i + 1))
        j = (j * 3) % m
''',
    "break_then_helper_store": '''
@wp.func
def put(out: wp.array(dtype=float), i: int, v: float):
    out[i] = v

@wp.kernel
def k(x: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    for i in range(n):  # here
        if x[i] < 0.0:
            break
        put(out, i, x[i] * x[i])
''',
}


@pytest.mark.parametrize("which", sorted(INT_INDEX_STILL_FIRES))
def test_dynamic_loop_fires_on_integer_state_that_decides_a_store(which, tmp_path):
    marked = _write(tmp_path, INT_INDEX_STILL_FIRES[which])
    assert _lines(tmp_path, "dynamic_loop") == marked


def test_a_host_write_after_read_names_the_call_as_written_and_the_read_nearest_before_it(tmp_path):
    # 'self.xwp.copy()' ran the array's name into the call, and the read cited was the copy before the loop
    from defects4warp.rules.access_rules import access_findings
    from defects4warp.rules.unit import Project

    (tmp_path / "sim.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef step(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    y[i] = x[i] * 2.0\n\n\nclass Sim:\n    def run(self, n):\n"
        "        wp.copy(self.prev, self.x)\n        for k in range(n):\n            wp.copy(self.prev, self.x)\n"
        "            wp.launch(step, dim=3, inputs=[self.x, self.y])\n            wp.copy(self.x, self.y)\n")
    found = [f for u in Project.from_folder(tmp_path).units() for f in access_findings(u)]
    assert ("host_write_after_read", "sim.py", 16,
            "'wp.copy(self.x, ...)' after step (line 15) read it, in run") in found


def test_a_captured_script_s_kernels_are_not_matched_with_a_sibling_script_s(tmp_path):
    """Two scripts in one folder define a kernel of the same name; only the one that ran (the
    capture's files) says which helpers and hand-written adjoints ran."""
    from defects4warp.engines.assess.source import function_defs, ran_functions

    (tmp_path / "a.py").write_text("def fwd(x):\n    return soft(x)\n\ndef soft(x):\n    return x\n")
    (tmp_path / "b.py").write_text("def fwd(x):\n    return quant(x)\n\ndef quant(x):\n    return x\n")
    assert function_defs(tmp_path)["fwd"][0] == "a.py"  # first definition wins without the capture's list
    defs = function_defs(tmp_path, files=["b.py"])
    assert defs["fwd"][0] == "b.py" and "soft" not in defs
    assert ran_functions(tmp_path, {"fwd"}, defs) >= {"fwd", "quant"}
