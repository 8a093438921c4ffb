"""Unsupported variants: a program that uses an API newer than a release
(case.yaml ``min_warp``) is neither scored nor a failure there; ``validate``
checks the claim (below the minimum the program must fail to build)."""

import copy

import pytest
import yaml

from defects4warp import validate as V
from defects4warp.corpus.case import CaseFormatError, load_case
from defects4warp.run.matrix import oracle_cell
from defects4warp.report.markdown import version_matrix_markdown
from defects4warp.run.runner import RunItem, skipped_record

from test_case_format import VALID, make_case


def _case(tmp_path, min_warp):
    data = copy.deepcopy(VALID)
    data["min_warp"] = min_warp
    tmp_path.mkdir(parents=True, exist_ok=True)
    return load_case(make_case(tmp_path, data))


def test_min_warp_for_all_variants_or_per_variant(tmp_path):
    c = _case(tmp_path / "a", "1.10.0")
    assert [v.min_warp for v in c.variants] == ["1.10.0", "1.10.0"]
    c = _case(tmp_path / "b", {"buggy": "1.6.0"})
    buggy, fixed = c.variant("buggy"), c.variant("fixed")
    assert buggy.min_warp == "1.6.0" and fixed.min_warp is None
    assert not buggy.supports("1.5.1") and buggy.supports("1.6.0") and buggy.supports("1.19.0")
    # below the minimum there is no expectation: not scored
    assert buggy.expectation_for("1.5.1", "small") is None
    assert buggy.expectation_for("1.6.2", "small").classes == ("copy_adjoint",)
    assert fixed.expectation_for("1.0.2", "small").verdict == "no_bug"


@pytest.mark.parametrize("value,field,text", [
    ({"nosuch": "1.6.0"}, "min_warp.nosuch", "'nosuch' is not a variant of this case (variants: buggy, fixed)"),
    ("latest", "min_warp", "'latest' is not a release number (e.g. 1.10.0)"),
    ({"buggy": "1.x"}, "min_warp.buggy", "'1.x' is not a release number (e.g. 1.10.0)"),
])
def test_bad_min_warp_names_file_and_field(tmp_path, value, field, text):
    data = copy.deepcopy(VALID)
    data["min_warp"] = value
    d = make_case(tmp_path, data)
    with pytest.raises(CaseFormatError) as exc:
        load_case(d)
    assert exc.value.field == field
    assert str(d / "case.yaml") in str(exc.value) and text in str(exc.value)


def test_run_does_not_diagnose_or_score_unsupported(tmp_path):
    c = _case(tmp_path, {"buggy": "1.10.0"})
    rec = skipped_record(RunItem(c, c.variant("buggy"), "small"), None, "1.5.1")
    assert rec["unsupported"] is True and rec["expected"] is None and rec["correct"] is None
    assert "needs Warp 1.10.0 or newer" in rec["skipped"]
    assert skipped_record(RunItem(c, c.variant("buggy"), "small"), None, "1.10.1") is None
    assert skipped_record(RunItem(c, c.variant("fixed"), "small"), None, "1.5.1") is None


def _fake_measure(monkeypatch, doc):
    monkeypatch.setattr(V.MEASUREMENTS, "get", lambda *a, **k: (doc, {}))


def test_validate_checks_the_claim(tmp_path, monkeypatch):
    c = _case(tmp_path, {"buggy": "1.10.0"})
    item = RunItem(c, c.variant("buggy"), "small")
    _fake_measure(monkeypatch, {"verdict": "refused", "warp_version": "1.5.1", "cost": {"wall_s": 0.4},
                                "failure": {"stage": "objective", "type": "AttributeError",
                                            "first_line": "AttributeError: module 'warp' has no attribute 'tile'"}})
    chk = V.validate_item(item, "cpu", "1.5.1")
    assert chk.status == "unsupported" and chk.ok
    assert chk.expected == {"verdict": "unsupported", "classes": [], "min_warp": "1.10.0"}
    assert "no attribute 'tile'" in chk.message and chk.seconds == 0.4
    assert V.counts([chk]) == {"passed": 0, "failed": 0, "unresolved": 0, "skipped": 0, "unsupported": 1}
    assert oracle_cell(chk.to_dict()) == "unsup"
    # the claim is wrong when the program builds and runs below the minimum
    _fake_measure(monkeypatch, {"verdict": "agrees", "warp_version": "1.5.1", "cost": {"wall_s": 1.0}})
    chk = V.validate_item(item, "cpu", "1.5.1")
    assert chk.status == "failed" and not chk.ok
    assert chk.message == "min_warp says 1.10.0, but the program builds and runs on Warp 1.5.1 (oracle verdict agrees)"


def test_version_matrix_shows_unsupported_and_sorts_releases():
    def check(rel, status, verdict="wrong"):
        exp = ({"verdict": "unsupported", "classes": [], "min_warp": "1.10.0"} if status == "unsupported"
               else {"verdict": "bug", "classes": ["overwrite"]})
        return {"case": "c", "variant": "buggy", "scale": "small", "expected": exp, "ok": True, "status": status,
                "signature": "zero", "relative_error": 1.0, "message": "",
                "oracle": {"verdict": verdict, "max_relative_error": 1.0, "signature": {"kind": "zero"}}}
    doc = {"device": "cpu", "machine": {"cpu": "x", "cores": 2, "memory_gib": 1, "os": "Linux", "python": "3.11"},
           "measured_on": "2026-12-01", "wall_s": 120.0,
           "releases": {"1.12.1": {"wall_s": 60.0, "checks": [check("1.12.1", "passed")]},
                        "1.9.1": {"wall_s": 60.0, "checks": [check("1.9.1", "unsupported")]}}}
    md = version_matrix_markdown(doc)
    assert "| case | variant | tagged | 1.9.1 | 1.12.1 |" in md
    assert "| c | buggy | bug overwrite | unsup | wrong 1 |" in md
    assert "Measured on 2026-12-01" in md


def test_audit_reports_support_changes_not_bug_changes():
    from defects4warp.run.matrix import audit, matrix_markdown

    def rel(status, unsupported):
        chk = {"case": "c", "variant": "buggy", "scale": "small", "expected": {"verdict": "bug", "classes": ["x"]},
               "ok": True, "status": status, "signature": "zero", "relative_error": 1.0, "message": "",
               "oracle": {"verdict": "wrong", "max_relative_error": 1.0, "signature": {"kind": "zero"}}}
        res = {"case": "c", "variant": "buggy", "scale": "small", "correct": None, "unsupported": unsupported,
               "diagnosis": {"verdict": "inconclusive", "classes": [], "cost": {"wall_s": 0.0}}}
        summ = {"engine": "reference", "device": "cpu", "verdict_accuracy": None, "class_accuracy": None,
                "detection_rate": None, "false_positive_rate": None}
        return {"validation": [chk], "run": {"results": [res], "summary": summ}, "wall_s": 1.0}

    doc = {"releases": {"1.5.1": rel("unsupported", True), "1.12.1": rel("passed", False)}}
    rep = audit(doc, "1.5.1", "1.12.1")
    assert rep["truth_changes"] == [{"case": "c", "variant": "buggy", "scale": "small", "change": "now supported",
                                     "from": "unsup", "to": "wrong 1"}]
    assert rep["verdict_flips"] == [] and rep["contradictions"] == []
    assert "| c | buggy | unsup | wrong 1 / inconclusive |" in matrix_markdown(doc)


def test_a_script_variant_below_min_warp_is_measured_as_its_script(monkeypatch):
    from defects4warp.corpus.case import default_corpus

    c = load_case(default_corpus() / "cold-store-pallet-probes")
    item = RunItem(c, c.variant("buggy"), "small", "script")
    seen = []

    def fake(*a, **k):
        seen.append(k.get("script"))
        return {"verdict": "refused", "warp_version": "1.6.2", "cost": {"wall_s": 0.5},
                "failure": {"first_line": "Exception: CPU kernel build failed with error code -1"}}, {}

    monkeypatch.setattr(V.MEASUREMENTS, "get", fake)
    chk = V.validate_item(item, "cpu", "1.6.2")
    # measured as an adapter, a folder without problem.py "fails to build" on every release
    assert len(seen) == 1 and seen[0] is not None and seen[0]["entry"] == "calibrate.py"
    assert chk.status == "unsupported" and "CPU kernel build failed" in chk.message
