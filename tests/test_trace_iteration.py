"""The runtime trace of a script captured at a later iteration (``--iteration k``).

Every ``gradient()`` of such a capture replays the script's iterations 1 .. k-1
before the k-th; the trace must read only the k-th iteration's backward(s), not
the earlier ones as windows of one gradient (it did: on the correct harbour
script at ``--iteration 3`` the detector ``window_handoff`` fired, "the
param->loss path of backward on T1 ... starts in launches recorded on tape T0").
"""

import shutil
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
HARBOUR = ROOT / "corpus" / "harbour-buoy-ballast-drift"
ARGS = ["--buoys", "8", "--steps", "60", "--iters", "5"]


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """The harbour variants copied out of the corpus: the capture runs the script, which writes
    ballast.txt next to itself (a file in the corpus would change the case's digest)."""
    root = tmp_path_factory.mktemp("harbour")
    for v in ("buggy", "fixed"):
        shutil.copytree(HARBOUR / v, root / v, ignore=shutil.ignore_patterns("__pycache__", "*.txt"))
    return root


def _traced(variant, iteration, root):
    from defects4warp.capture import ScriptSpec
    from defects4warp.capture.core import capture_problem
    from defects4warp.measure import trace as tm

    p = capture_problem(root / variant, ScriptSpec(entry="calibrate.py", args=ARGS, iteration=iteration), "cpu",
                        timeout_s=120)
    result, trace = tm.trace_call(p.gradient, params=p.params)
    return p, result, trace, tm.trace_findings(trace)


def _backwards(trace):
    return [e["seq"] for e in trace["events"] if e["kind"] == "backward"]


def test_iteration_three_of_a_correct_script_is_traced_from_its_own_tape(copies):
    p, result, trace, findings = _traced("fixed", 3, copies)
    backs = _backwards(trace)
    start = trace["start"]
    assert len(backs) == 3 and backs[1] < start < backs[2]  # iterations 1 and 2 replayed, then the 3rd
    assert trace["events"][start]["kind"] == "tape_enter"  # the params are set when its tape starts recording
    assert findings == []
    # the returned gradient is matched against the backwards of the measured iteration only
    assert {r["matches_backward"] for r in trace["result"]["grads"].values()} == {0}
    np.testing.assert_allclose(result["mass"], p.gradient()["mass"], rtol=1e-6)


def test_iteration_one_is_traced_whole_as_before(copies):
    _, _, trace, findings = _traced("fixed", 1, copies)
    assert trace["start"] == 0 and len(_backwards(trace)) == 1
    assert findings == []


def test_the_trace_probe_counts_only_the_measured_iteration(monkeypatch, copies):
    """The probe's summary (backward tapes, which the engine cites as ``trace_backward_windows``
    from two on) covers the measured iteration: 1 tape at --iteration 3, where it said 3."""
    from types import SimpleNamespace

    from defects4warp.engines.assess import AssessContext
    from defects4warp.engines.assess import trace as trace_assess
    from defects4warp.probes import trace as trace_probe

    _, _, trace, _ = _traced("fixed", 3, copies)
    ctx = SimpleNamespace(traces={1: trace}, f0=None, doc={}, save=lambda: None)
    out = trace_probe.measure(ctx)
    assert out["summary"]["backward"] == 1 and out["summary"]["backward_tapes"] == 1
    assert out["findings"] == []
    a = trace_assess.bug_evidence({"trace": out}, AssessContext())
    assert a.cited == [] and a.evidence == []


@pytest.mark.parametrize("variant", ["buggy"])
def test_iteration_three_of_the_buggy_script_keeps_no_window_finding(variant, copies):
    _, _, trace, findings = _traced(variant, 3, copies)
    assert "window_handoff" not in {f["id"] for f in findings}
    assert len([b for b in _backwards(trace) if b >= trace["start"]]) == 1
