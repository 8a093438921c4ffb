"""The ablation of hand-written adjoints (harness/probes/ablation.py, read by harness/engines/assess/ablation.py) and
the verdict rule that reads it.

Programs measured here are written for this test (none copied from the corpus): a straight-through
estimator with L2 weight decay on the same weights (correct), a smooth function whose hand-written
adjoint is twice its derivative (wrong), the straight-through estimator with the decay's intermediate
array allocated without requires_grad (a real bug elsewhere), and the latter without any
hand-written adjoint (the worker document must not change).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from defects4warp.engines import reference
from defects4warp.engines.assess import AssessContext, ablation as ablation_assess
from defects4warp.evidence_table import load_table
from defects4warp.probes import ablation

# -- programs -----------------------------------------------------------------------------------

#: The correct straight-through program (also the probe-units pair's member); the others are derived from it by
#: replacing its hand-written function, or the decay's intermediate array's requires_grad.
_BASE = (Path(__file__).resolve().parent / "programs" / "ablation_ste_decay" / "problem.py").read_text()
_STE = _BASE[_BASE.index("@wp.func\n"):_BASE.index("@wp.kernel\n")]
_HEAD = _BASE[:_BASE.index("@wp.func\n")]
_SQ_ALLOC = "sq = wp.zeros(self.w.shape[0], dtype=float, requires_grad=True"

_PLAIN = """
@wp.func
def binarize(x: float):
    return wp.sign(x) + 0.5 * (wp.abs(x) - x * wp.sign(x))
"""

_SOFT_TWICE = """
@wp.func
def binarize(x: float):
    return wp.log(1.0 + wp.exp(x))


@wp.func_grad(binarize)
def adj_binarize(x: float, adj_ret: float):
    wp.adjoint[x] += 2.0 * adj_ret / (1.0 + wp.exp(-x))
"""

_CLAMP_STE = """
@wp.func
def binarize(x: float):
    return wp.clamp(x, -0.5, 0.5)


@wp.func_grad(binarize)
def adj_binarize(x: float, adj_ret: float):
    wp.adjoint[x] += adj_ret
"""


def _write(folder, func_src: str, sq_grad: bool = True):
    src = _BASE.replace(_STE, func_src.strip("\n") + "\n\n")
    src = src.replace(_SQ_ALLOC, _SQ_ALLOC.replace("True", str(sq_grad)))
    assert (func_src == _STE or src != _BASE) and src.count(_SQ_ALLOC.replace("True", str(sq_grad))) == 1
    (folder / "problem.py").write_text(src)
    return str(folder)


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """name -> (record, diagnosis) of the reference engine on each program (no release differential)."""
    programs = {"ste_decay": (_STE, True), "soft_twice": (_SOFT_TWICE, True), "ste_no_requires_grad": (_STE, False),
                "plain_no_requires_grad": (_PLAIN, False), "clamp_ste_decay": (_CLAMP_STE, True)}
    eng = reference.ReferenceEngine(timeout_s=240, differential=False)
    out = {}
    for name, (src, sq_grad) in programs.items():
        path = _write(tmp_path_factory.mktemp(name), src, sq_grad)
        rec = eng.measure(path, "cpu", "small")
        out[name] = (rec, eng.judge(rec["doc"], path))
    return out


def test_straight_through_with_weight_decay_reads_surrogate(measured):
    """(a) A correct straight-through estimator next to a smooth term: the ablation reads surrogate, no bug."""
    rec, diag = measured["ste_decay"]
    abl = rec["doc"]["ablation"]
    assert abl["status"] == "measured" and abl["restored"] == {"identical": True, "max_abs_diff": 0.0}
    assert [f["name"] for f in abl["functions"]] == ["binarize"]
    facts = ablation_assess.read(rec["doc"])
    assert facts["reading"] == "surrogate" and facts["items"]
    for it in facts["items"]:
        # without the adjoint: the decay term alone, which finite differences see; sign's own adjoint adds 0
        assert it["native"] == it["zero"] and it["native_agrees"]
        assert abs(it["program"] - it["fd"]) > 5 * abs(it["fd"]) * 1e-2
    # every weight lies in the straight-through window |w| <= 1, where sign is flat: all 16 change, none smooth
    c = facts["coordinates"]
    assert c["n"] % 16 == 0 and c["changed"] == c["changed_where_flat"] == c["n"] and c["changed_where_smooth"] == 0
    assert diag["verdict"] == "no_bug" and diag["classes"][0]["id"] == "surrogate_gradient"
    assert [c["id"] for c in diag["cited"]] == ["ablation:surrogate"]


def test_clamp_straight_through_reads_surrogate_where_only_saturated_weights_change(measured):
    """A clamp with a straight-through adjoint: inside the limits the adjoint is the derivative (no change),
    beyond them the clamp is flat and the adjoint a surrogate. Random directions mix both kinds of weight,
    so the reading is made per coordinate: every changed one is flat."""
    rec, diag = measured["clamp_ste_decay"]
    facts = ablation_assess.read(rec["doc"])
    c = facts["coordinates"]
    assert facts["reading"] == "surrogate"
    assert 0 < c["changed"] == c["changed_where_flat"] < c["n"] and c["changed_where_smooth"] == 0
    assert diag["verdict"] == "no_bug" and diag["classes"][0]["id"] == "surrogate_gradient"


def test_smooth_function_with_doubled_adjoint_is_a_custom_adjoint_error(measured):
    """(b) softplus with a hand-written adjoint twice its derivative, plus decay: adjoint_not_derivative."""
    rec, diag = measured["soft_twice"]
    facts = ablation_assess.read(rec["doc"])
    assert facts["reading"] == "adjoint_not_derivative"
    for it in facts["items"]:
        assert it["native_agrees"] and it["native"] != it["zero"]
    c = facts["coordinates"]
    assert c["changed"] == c["changed_where_smooth"] == c["n"] and c["changed_where_flat"] == 0
    assert diag["verdict"] == "bug" and diag["classes"][0]["id"] == "custom_adjoint_error"
    assert "ablation:adjoint_not_derivative" in [c["id"] for c in diag["cited"]]


def test_straight_through_with_a_real_bug_elsewhere_stays_a_bug(measured):
    """(c) The straight-through estimator with the decay's intermediate array lacking requires_grad:
    without the adjoint the gradient still disagrees, so the ablation says nothing and the bug stands."""
    rec, diag = measured["ste_no_requires_grad"]
    facts = ablation_assess.read(rec["doc"])
    assert facts["reading"] == "elsewhere"
    assert not all(it["native_agrees"] for it in facts["items"])
    assert diag["verdict"] == "bug"
    assert "ablation:surrogate" not in [c["id"] for c in diag["cited"]]


def test_program_without_custom_adjoint_gets_no_ablation(measured):
    """(d) A confirmed disagreement in a program without @wp.func_grad: no key, no cost entry, no module."""
    rec, diag = measured["plain_no_requires_grad"]
    doc = rec["doc"]
    assert diag["verdict"] == "bug"
    assert any(r["verdict"] == "confirmed" for r in doc["sweep"]["items"])
    assert "ablation" not in doc and "ablation" not in doc["cost"]["probe_s"]
    assert "probes/ablation.py" not in doc["code"]
    assert not [e for e in diag["evidence"] if e["probe"] == "ablation"]
    # the worker's keys are those of the probe list and the worker's own: nothing new
    assert set(doc) - set(doc["options"]["probes"]) == {"device", "scale", "options", "errors", "cost",
                                                         "warp_version", "protocol", "running", "log_tail", "code"}


_RELOADED = """
import importlib

import numpy as np
import warp as wp

import quant


class Problem:
    def __init__(self, device):
        self.device = device
        rng = np.random.default_rng(3)
        w = rng.uniform(0.2, 0.9, 8) * rng.choice([-1.0, 1.0], 8)
        self.w = wp.array(w, dtype=float, requires_grad=True, device=device)
        self.params = {"w": self.w}

    def _run(self):
        out = wp.zeros(1, dtype=float, requires_grad=True, device=self.device)
        wp.launch(quant.loss_kernel, dim=8, inputs=[self.w], outputs=[out], device=self.device)
        return out

    def objective(self):
        return float(self._run().numpy()[0])

    def gradient(self):
        importlib.reload(quant)  # the functions are defined anew on every call
        tape = wp.Tape()
        with tape:
            out = self._run()
        tape.backward(out)
        g = {"w": self.w.grad.numpy().copy()}
        tape.zero()
        return g


def make_problem(device, scale="small"):
    return Problem(device)
"""

_QUANT_KERNEL = """

@wp.kernel
def loss_kernel(w: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    r = binarize(w[i]) - 0.3
    wp.atomic_add(out, 0, r * r + 0.5 * w[i] * w[i])
"""


@pytest.mark.parametrize("spelling", ["wp.func_grad", "func_grad"])
def test_functions_defined_anew_per_call(tmp_path, spelling):
    """A program whose gradient() defines its functions anew (a module reloaded, as a captured script run
    again per call does). Through ``wp.func_grad`` the ablation's stand-in decorator reaches them (read
    as the surrogate it is); through a name bound to Warp's own decorator it cannot, and says so."""
    ste = _STE if spelling == "wp.func_grad" else _STE.replace("@wp.func_grad", "@func_grad")
    head = _HEAD + ("" if spelling == "wp.func_grad" else "from warp._src.context import func_grad\n")
    (tmp_path / "problem.py").write_text(_RELOADED)
    (tmp_path / "quant.py").write_text(head + ste + _QUANT_KERNEL)
    rec = reference.ReferenceEngine(timeout_s=240, differential=False).measure(str(tmp_path), "cpu", "small")
    abl = rec["doc"]["ablation"]
    if spelling == "wp.func_grad":
        assert abl["status"] == "measured" and abl["restored"]["identical"]
        assert ablation_assess.read(rec["doc"])["reading"] == "surrogate"
    else:
        assert abl["status"] == "not measured" and "defined the functions anew" in abl["reason"]
        assert ablation_assess.read(rec["doc"])["reading"] is None


# -- the assessment half on synthetic documents -------------------------------------------------------


def _doc(native, zero, *, program=(5.0, -3.0), fd=(0.5, -0.3), restored=True, status="measured", point="given",
         flat=2, smooth=0, kink=None):
    """Two coordinate FD items at the given point, both swept and confirmed, and an ablation of them
    whose coordinate comparison counts ``flat`` and ``smooth`` changed coordinates; ``kink``: the one-sided
    and central differences of item 0 at the sweep's smallest step (a corner within the base step)."""
    items = [{"kind": "coord", "param": "w", "index": i, "fd": f, "unc": 1e-6} for i, f in enumerate(fd)]
    sweep = [{"kind": "coord", "param": "w", "index": i, "point": point, "item": i, "verdict": "confirmed",
              "autodiff": program[i], "steps": [0.1, 1.0, 10.0], "forward": [fd[i]] * 2, "backward": [fd[i]] * 2,
              "central": [fd[i]] * 3}
             for i in range(2)]
    coords = {"n": 2, "changed": flat + smooth, "changed_where_flat": flat, "changed_where_smooth": smooth,
              "examples": []}
    abl = {"status": status, "functions": [{"name": "q", "file": "problem.py", "line": 3}],
           "restored": {"identical": restored, "max_abs_diff": 0.0 if restored else 1e-3},
           "points": {"given": {"program": list(program), "native": list(native), "zero": list(zero),
                                "coordinates": coords}}}
    if status != "measured":
        abl["reason"] = "synthetic"
    if kink is not None:
        sweep[0].update(forward=[kink, fd[0]], backward=[kink, fd[0]], central=[kink, fd[0], fd[0]])
    return {"fd": {"rtol": 1e-2, "items": items}, "sweep": {"items": sweep}, "ablation": abl}


@pytest.mark.parametrize("native, zero, kw, reading", [
    ((0.5, -0.3), (0.5, -0.3), {}, "surrogate"),
    ((0.501, -0.3), (0.501, -0.3), {}, "surrogate"),                    # within rtol 1e-2 of finite differences
    ((0.5, -0.3), (0.1, -0.3), {"flat": 1, "smooth": 1}, "adjoint_not_derivative"),  # f adds 0.4 at w[0]
    ((0.5, -0.3), (0.5, -0.3), {"flat": 0, "smooth": 1}, "adjoint_not_derivative"),  # smooth elsewhere in a direction
    ((0.9, -0.3), (0.9, -0.3), {}, "elsewhere"),                        # still 80 % off finite differences
    ((0.9, -0.3), (0.9, -0.3), {"kink": 0.9}, "surrogate"),             # ... but one-sided at 0.1x explain it
    ((0.5, -0.3), (0.5, -0.3), {"flat": 0}, None),                      # the adjoints change nothing
])
def test_read_on_synthetic_documents(native, zero, kw, reading):
    assert ablation_assess.read(_doc(native, zero, **kw))["reading"] == reading


def test_coordinates_count_where_the_adjoint_changes_a_flat_or_a_smooth_function():
    """A clamp with a straight-through adjoint beside a smooth term: coordinates 0-1 saturated (the clamp is flat,
    removing its adjoint equals stopping it), 2 inside (the adjoint is the derivative: no change), 3 a wrong adjoint
    of a smooth piece (removing differs from stopping)."""
    program = np.array([1.1, -0.9, 0.7, 3.0])
    native = np.array([0.1, 0.1, 0.7, 1.5])
    zero = np.array([0.1, 0.1, 0.2, 0.2])
    c = ablation.coordinates(program, native, zero)
    assert (c["n"], c["changed"], c["changed_where_flat"], c["changed_where_smooth"]) == (4, 3, 2, 1)
    assert [e["index"] for e in c["examples"]] == [3, 0, 1]
    # REPEAT_RTOL (1e-5 of the largest magnitude): a last-bit difference is no change
    assert ablation.coordinates(program, program * (1 + 1e-9), program)["changed"] == 0


@pytest.mark.parametrize("kw, why", [
    ({"restored": False}, "not bit-identical"),
    ({"status": "not measured"}, "not measured: synthetic"),
    ({"point": "perturbed"}, "did not measure"),
])
def test_read_refuses_what_it_cannot_vouch_for(kw, why):
    r = ablation_assess.read(_doc((0.5, -0.3), (0.5, -0.3), **kw))
    assert r["reading"] is None and why in r["why"]


def test_assess_is_silent_without_an_ablation_and_cites_only_a_wrong_adjoint():
    assert ablation_assess.assess({}, None).evidence == [] and ablation_assess.assess({}, None).facts == {}
    ctx = AssessContext(table=load_table())
    for smooth, cited in ((0, []), (1, ["ablation:adjoint_not_derivative"])):
        doc = _doc((0.5, -0.3), (0.5, -0.3), flat=2 - smooth, smooth=smooth)
        ctx.assessed["ablation"] = ablation_assess.assess(doc, ctx)
        assert [e.id for e in ablation_assess.bug_evidence({}, ctx).cited] == cited


class _Src:
    def __init__(self, rules):
        self.facts = {"rules": rules}


def _measured(doc, rules=("custom_adjoint",)):
    sweeps = doc["sweep"]["items"]
    comps = [("finite differences", {"signature": "subtly_wrong"})]
    return reference._Measured(doc, comps, sweeps, {}, None, [], _Src(list(rules)), load_table(),
                               ablation_assess.read(doc))


def test_verdict_rule_reads_the_ablation():
    """``_surrogate_ablated``: no bug on a surrogate reading; nothing when func_grad_assign fired, when
    the reading is another, or when a confirmed item lies outside the ablation."""
    doc = _doc((0.5, -0.3), (0.5, -0.3))
    verdict, sig, ev = reference._surrogate_ablated(_measured(doc))
    assert (verdict, sig, [e.id for e in ev]) == ("no_bug", "agrees", ["ablation:surrogate"])
    assert reference._surrogate_ablated(_measured(doc, rules=("custom_adjoint", "func_grad_assign"))) is None
    assert reference._surrogate_ablated(_measured(_doc((0.5, -0.3), (0.1, -0.3), flat=1, smooth=1))) is None
    m = _measured(doc)
    m.confirmed += 1  # e.g. a confirmed item after train(), which the ablation did not measure
    assert reference._surrogate_ablated(m) is None


def test_one_zero_adjoint_is_registered_per_module_key_and_signature():
    """A captured script run again leaves one live copy of each function per run; Warp 1.0-1.9 refuse a
    second adjoint overload with the same signature on the module's current function ("Duplicate
    function overload quantize", measured on 1.0.2 before this), so the zero state registers one."""
    from types import SimpleNamespace

    from defects4warp.probes.ablation import _Adjoints

    module = SimpleNamespace(functions={})
    old, current, other = (SimpleNamespace(key=k, module=module, input_types={"x": float, "s": float})
                           for k in ("quantize", "quantize", "clip"))
    module.functions["quantize"] = current
    grads = [SimpleNamespace(func=None) for _ in range(3)]
    adj = _Adjoints.__new__(_Adjoints)  # only the bookkeeping is exercised (no Warp state is touched)
    adj.targets = [(old, old), (current, current), (other, other)]
    adj.saved = [(t, g, False) for (t, _), g in zip(adj.targets, grads)]
    picked = adj._one_per_signature()
    assert [(t.key, g) for t, g in picked] == [("quantize", grads[1]), ("clip", grads[2])]
    assert picked[0][0] is current  # the one a rebuild reads, not the stale copy
    # same key, another signature (a real overload): both kept
    old.input_types = {"x": int, "s": float}
    assert len(adj._one_per_signature()) == 3
