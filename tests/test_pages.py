"""Generated pages: the committed docs equal what the committed JSON renders
to (no measurement), and a page edited by hand is caught."""

import json
import shutil

import pytest
from click.testing import CliRunner

from defects4warp.report.pages import upgrade_audit
from defects4warp.report.pages.engines_page import engines_measured_block, render_engines
from defects4warp.report.pages.measuring import (measure, measure_baselines, measure_order, missing_releases,
                                         unmeasured_releases)
from defects4warp.report.pages.prose import PageSourceError, wrap_prose
from defects4warp.report.pages.registry import PAGES, check_pages, write_pages
from defects4warp.report.pages.release_matrix import _summary, answer_cell, render_release_matrix
from defects4warp.report.pages.results import RESULTS_END, RESULTS_START, render_results
from defects4warp.report.pages.sources import (BOUNDARIES_JSON, MIN_WARP_JSON, ROOT, baseline_docs, baseline_path,
                                       validated_releases, validation_files)
from defects4warp.report.pages.upgrade_audit import _costs_paragraph, measurement_costs, render_upgrade_audit
from defects4warp.report.pages.versions import render_old_releases, render_version_matrix
from defects4warp.cli import main


def test_committed_pages_match_committed_json():
    assert check_pages() == []


def _fixed_docs(root):
    """A docs tree under ``root`` rendered from a fixed pair of validation files (the committed set grows
    release by release) and the committed min_warp and boundary data, with no engine file."""
    (root / "docs" / "data").mkdir(parents=True)
    data = ROOT / "docs" / "data"
    for p in [data / "validation-1.0.2.json", data / "oracle-validation-1.12.1-1.19.0.json",
              ROOT / MIN_WARP_JSON, ROOT / BOUNDARIES_JSON]:
        shutil.copy(p, root / "docs" / "data" / p.name)
    for p in PAGES:
        shutil.copy(ROOT / p.path, root / p.path)
    write_pages(root)


def test_hand_edit_is_caught_and_rewritten(tmp_path):
    _fixed_docs(tmp_path)
    assert check_pages(tmp_path) == []
    vm = tmp_path / "docs" / "version-matrix.md"
    vm.write_text(vm.read_text().replace("| fountain-jet-aiming | buggy |", "| fountain-jet-aiming | buggy2 |"))
    assert check_pages(tmp_path) == ["docs/version-matrix.md"]
    assert write_pages(tmp_path) == ["docs/version-matrix.md"]
    assert check_pages(tmp_path) == []
    # a new per-release validation file joins the matrix as a column, in release order
    doc = json.loads((tmp_path / "docs" / "data" / "oracle-validation-1.12.1-1.19.0.json").read_text())
    one = {"device": "cpu", "machine": doc["machine"], "measured_on": "2026-12-02", "wall_s": 60.0,
           "releases": {"1.5.1": {"wall_s": 60.0, "checks": doc["releases"]["1.12.1"]["checks"][:1]}}}
    (tmp_path / "docs" / "data" / "validation-1.5.1.json").write_text(json.dumps(one))
    assert validated_releases(tmp_path) == {"1.0.2", "1.5.1", "1.12.1", "1.19.0"}
    assert missing_releases(["1.5.1", "1.9.1"], tmp_path) == ["1.9.1"]
    text = render_version_matrix(tmp_path)
    assert "| case | variant | tagged | 1.0.2 | 1.5.1 | 1.12.1 | 1.19.0 |" in text
    assert "Measured on 2026-12-02" in text


def test_pages_check_verb():
    res = CliRunner().invoke(main, ["maint", "pages", "--check", "--warp", "1.12.1,1.19.0"])
    assert res.exit_code == 0, res.output
    assert "docs/version-matrix.md: matches" in res.output
    assert "docs/release-matrix.md: matches" in res.output
    assert "docs/results.md (sections after the generated block): not generated" in res.output


def test_old_releases_page_from_its_json(tmp_path):
    data = tmp_path / "docs" / "data"
    data.mkdir(parents=True)
    (data / "min-warp.json").write_text(json.dumps({"releases": ["1.0.2", "1.5.1", "1.12.1"], "variants": {
        "c/fixed": {"min_warp": "1.5.1", "last_failure": "WarpCodegenError: Error while parsing | x",
                    "checks": {"1.12.1": {"ok": True}, "1.0.2": {"ok": False}, "1.5.1": {"ok": True}}}}}))
    (data / "release-boundaries.json").write_text(json.dumps({"upto": "1.12.1", "variants": {
        "d/fixed@small": {"labels_hold_from": "1.4.2", "last_contradiction": "1.3.3",
                          "checks": {"1.3.3": {"status": "failed", "oracle": "wrong", "error": 1.0}},
                          "mechanism": "wp.clone is not on the tape there"},
        "e/fixed@small": {"labels_hold_from": "1.1.0", "last_contradiction": "1.0.2", "checks": {}}}}))
    text = render_old_releases(tmp_path)
    assert "- d/fixed@small: wp.clone is not on the tape there" in text
    assert "- e/fixed@small" not in text
    assert "| c/fixed | 1.5.1 | WarpCodegenError: Error while parsing \\| x | 1.0.2 fails, 1.5.1 ok, 1.12.1 ok |" in text
    assert "| d/fixed@small | 1.4.2 | 1.3.3 | wrong, relative error 1 |" in text


# ---------------------------------------------------------------------------------------------------------------
# The engine across releases: docs/data/engine-<release>.json -> release matrix, audits, results block

from defects4warp.report import engine_matrix  # noqa: E402
from defects4warp.run.matrix import answer_changes, noise_sentence  # noqa: E402


def _rec(case, variant, expected, verdict, classes, *, split="dev", wall=1.0, evals=10, error=None,
         tracker=None, unsupported=False):
    """A result record as defects4warp.run.runner.run makes it (scored with defects4warp.run.scoring.judge)."""
    from defects4warp.run.scoring import judge

    diag = {"verdict": verdict, "classes": [{"id": c, "score": s} for c, s in classes], "signature": None,
            "evidence": [], "cost": {"wall_s": wall, "objective_evals": evals}}
    if error:
        diag["error"] = error
    if tracker:
        diag["evidence"].append({"probe": "tracker", "clean": False, "data": tracker})
    rec = {"case": case, "variant": variant, "scale": "small", "split": split, "program": "adapter",
           "expected": expected, "diagnosis": diag, "correct": judge(expected, diag), "seconds": wall + 0.5}
    if unsupported:
        rec.update(expected=None, correct=None, unsupported=True, skipped="unsupported: needs Warp 1.19.0")
        rec["diagnosis"]["verdict"] = "skipped"
    return rec


BUG = {"verdict": "bug", "classes": ["overwrite"]}
OK = {"verdict": "no_bug", "classes": ["correct"]}


def _doc(release, recs, *, version="0.1.0+v4", machine=None):
    return {"format": engine_matrix.FORMAT, "release": release, "warp_version": release,
            "engine": {"name": "reference", "version": version, "code": "0123456789abcdef"}, "commit": "abc",
            "device": "cpu", "machine": machine or {"cpu": "Test CPU", "cores": 2, "memory_gib": 8.0,
                                                     "os": "Linux", "python": "3.11"},
            "measured_on": "2026-12-01", "jobs": 1, "wall_s": 30.0, "cpu_s": 40.0, "measured": 4, "reused": 0,
            "complete": True, "corpus": {"cases": 3, "runs": len(recs), "selection": "*", "programs": "auto",
                                         "digest": "d" * 16},
            "runs": [engine_matrix.compact_record(r) for r in recs]}


def _root(tmp_path):
    """A copy of the committed docs (pages and their data) to render into, without the committed
    engine files (each test writes its own; the committed set grows release by release)."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    for p in (tmp_path / "docs" / "data").glob("engine-*.json"):
        p.unlink()
    shutil.rmtree(tmp_path / "docs" / "data" / "baselines", ignore_errors=True)
    return tmp_path


def _two_releases(root):
    old = [_rec("alpha", "buggy", BUG, "bug", [("missing_tape_zero", 0.6), ("overwrite", 0.3)], wall=2.0, evals=20,
                tracker=[{"kernel": "step", "arg": "x", "sites": ["a.py:3"]}]),
           _rec("alpha", "fixed", OK, "no_bug", [("correct", 0.9)], wall=2.0),
           _rec("beta", "buggy", BUG, "no_bug", [("correct", 0.8)], split="test", wall=2.0),
           _rec("beta", "fixed", OK, "error", [], split="test", error="timeout after 300 s")]
    new = [_rec("alpha", "buggy", BUG, "bug", [("overwrite", 0.7)], wall=2.1, evals=30),
           _rec("alpha", "fixed", OK, "no_bug", [("correct", 0.9)], wall=2.0),
           _rec("beta", "buggy", BUG, "bug", [("overwrite", 0.8)], split="test", wall=2.0),
           _rec("beta", "fixed", OK, "no_bug", [("correct", 0.9)], split="test", wall=2.0),
           _rec("gamma", "fixed", None, "skipped", [], unsupported=True)]
    engine_matrix.write(engine_matrix.data_path(root, "1.18.0"), _doc("1.18.0", old))
    engine_matrix.write(engine_matrix.data_path(root, "1.19.0"), _doc("1.19.0", new))


def test_engine_file_is_compact_strict_json_one_run_per_line(tmp_path):
    rec = _rec("alpha", "buggy", BUG, "bug", [("overwrite", 0.61234), ("double_count", 0.2), ("truncation", 0.1),
                                              ("tape_scope", 0.05)], wall=float("inf"),
               tracker=[{"kernel": "step", "arg": "x", "sites": ["a.py:3", "a.py:9"]}])
    doc = _doc("1.19.0", [rec] * 3)
    path = engine_matrix.data_path(tmp_path, "1.19.0")
    engine_matrix.write(path, doc)
    text = path.read_text()
    assert text.count('{"case":"alpha"') == 3 and len(text.splitlines()) == len(text.splitlines()[:-5]) + 5
    back = engine_matrix.read(path)
    run = back["runs"][0]
    assert run["top"] == [["overwrite", 0.6123], ["double_count", 0.2], ["truncation", 0.1]]  # top-3, rounded
    assert run["tracker"] == {"x in kernel step": ["a.py:3", "a.py:9"]}
    assert run["correct"] == {"verdict": True, "class": True} and run["expected"] == BUG
    json.loads(text)  # strict: inf was written as a string, not as Infinity
    assert "Infinity" not in text
    assert engine_matrix.full_record(run)["diagnosis"]["classes"][0] == {"id": "overwrite", "score": 0.6123}


def test_engine_file_errors_name_file_and_field(tmp_path):
    path = engine_matrix.data_path(tmp_path, "1.19.0")
    path.parent.mkdir(parents=True)
    doc = _doc("1.19.0", [_rec("a", "buggy", BUG, "bug", [("overwrite", 1.0)])])
    del doc["runs"][0]["verdict"]
    path.write_text(json.dumps(doc))
    with pytest.raises(engine_matrix.EngineFileError, match=r"engine-1.19.0.json: runs\[0\] has no 'verdict'"):
        engine_matrix.read(path)
    doc = _doc("1.18.0", [])
    path.write_text(json.dumps(doc))
    with pytest.raises(engine_matrix.EngineFileError, match="holds release '1.18.0'"):
        engine_matrix.read_all(tmp_path)
    path.write_text("{")
    with pytest.raises(PageSourceError, match="engine-1.19.0.json: not readable JSON"):
        render_release_matrix(tmp_path)


def test_stale_reason():
    doc = _doc("1.19.0", [])
    ident = dict(doc["engine"])
    assert engine_matrix.stale_reason(doc, ident, "d" * 16, "cpu") is None
    assert engine_matrix.stale_reason(None, ident, "d" * 16, "cpu") == "no engine file"
    assert "engine version 0.1.0+v4 there, 0.2.0 now" == engine_matrix.stale_reason(doc, dict(ident, version="0.2.0"),
                                                                                   "d" * 16, "cpu")
    assert "engine code" in engine_matrix.stale_reason(doc, dict(ident, code="f" * 16), "d" * 16, "cpu")
    assert "corpus" in engine_matrix.stale_reason(doc, ident, "e" * 16, "cpu")
    assert "device" in engine_matrix.stale_reason(doc, ident, "d" * 16, "cuda:0")
    assert engine_matrix.stale_reason(dict(doc, complete=False), ident, "d" * 16, "cpu") == "the file is incomplete"


def test_release_matrix_from_engine_files(tmp_path):
    root = _root(tmp_path)
    _two_releases(root)
    text = render_release_matrix(root)
    per_release = text.split("## Per release")[1].split("## Per split")[0]
    rows = {line.split(" | ")[0][2:]: line for line in per_release.splitlines() if line.startswith("| 1.")}
    # 1.18.0: 4 scored; verdicts right 2/4 (beta/buggy missed, beta/fixed errored), classes right 1/4
    assert rows["1.18.0"].startswith("| 1.18.0 | `reference` 0.1.0+v4, code 0123456789abcdef, commit abc | 4 | 4 | "
                                     "0.500 | 0.250 | 0.500 | 0.000 | 1 | 0 | 2.00 | 10 | 10.0 |")
    assert rows["1.19.0"].startswith("| 1.19.0 | `reference` 0.1.0+v4, code 0123456789abcdef, commit abc | 5 | 4 | "
                                     "1.000 | 1.000 | 1.000 | 0.000 | 0 | 1 |")
    assert "| 1.17.0 | not measured: `defects4warp maint pages --measure --warp 1.17.0` |" in text
    assert "| 1.18.0 | test | 2 | 0.000 | 0.000 | 0.000 | 0.000 | 1 |" in text
    assert "| alpha | buggy | bug overwrite | bug missing_tape_zero x | ok |" in text
    assert "| beta | buggy | bug overwrite | no_bug correct ! | ok |" in text
    assert "| beta | fixed | no_bug correct | ERROR | ok |" in text
    assert "| gamma | fixed | unscored | - | unsup |" in text
    assert "- beta/fixed: expected no_bug correct; harness error: timeout after 300 s" in text
    assert "- alpha/buggy: expected bug overwrite; answered bug (missing_tape_zero 0.60, overwrite 0.30)" in text
    assert "**Warp 1.19.0** (0): none." in text
    # both files are from engine code 0123456789abcdef, not this checkout's: the page says so, with the command
    from defects4warp.run.store import code_digest

    assert (f"**Measured with an older engine:** 2 of 2 releases (1.18.0, 1.19.0) were measured with engine code "
            f"0123456789abcdef, not the code this commit ships ({code_digest()[:16]})") in text
    assert "`defects4warp maint pages --measure --no-validate --warp 1.18.0,1.19.0` measures them again." in text
    # a file from the shipped code is not named
    doc = json.loads((root / "docs" / "data" / "engine-1.19.0.json").read_text())
    doc["engine"]["code"] = code_digest()[:16]
    (root / "docs" / "data" / "engine-1.19.0.json").write_text(json.dumps(doc))
    text = render_release_matrix(root)
    assert "1 of 2 releases (1.18.0) was measured with engine code 0123456789abcdef" in text
    assert "`defects4warp maint pages --measure --no-validate --warp 1.18.0` measures it again." in text
    # files from two older codes: two paragraphs with a blank line between (adjacent lines render as one)
    doc["engine"]["code"] = "fedcba9876543210"
    (root / "docs" / "data" / "engine-1.19.0.json").write_text(json.dumps(doc))
    text = render_release_matrix(root)
    first = text.index("1 of 2 releases (1.18.0) was measured with engine code 0123456789abcdef")
    second = text.index("**Measured with an older engine:** 1 of 2 releases (1.19.0) was measured with engine code "
                        "fedcba9876543210")
    assert "\n\n**Measured with an older engine:**" in text[first:second + 40]


def test_upgrade_audit_per_pair(tmp_path):
    root = _root(tmp_path)
    for rel in ("1.17.0", "1.18.0"):  # this test's two older releases have no ground truth
        (root / "docs" / "data" / f"validation-{rel}.json").unlink(missing_ok=True)
    _two_releases(root)
    text = render_upgrade_audit(root)
    assert "| 1.18.0 -> 1.19.0 | not validated on 1.18.0 | needs both validated | 3 verdict/class, 1 tracker, " \
           "2 cost | 0 |" in text
    assert "| 1.17.0 -> 1.18.0 | not validated on 1.17.0, 1.18.0 | needs both validated | not measured on 1.17.0 " \
           "| 4 |" in text
    sec = text.split("## Warp 1.18.0 -> 1.19.0")[1]
    # judged on both releases: the older answers were wrong (a wrong class, a missed bug, a harness error)
    assert "- alpha/buggy: bug missing_tape_zero -> bug overwrite (wrong -> right)" in sec
    assert "- beta/buggy: no_bug correct -> bug overwrite (wrong -> right)" in sec
    assert "- beta/fixed: error -> no_bug correct (wrong -> right)" in sec
    assert "now right" not in text
    assert "- alpha/buggy: x in kernel step disappeared" in sec
    assert "- alpha/buggy: objective evaluations 20 -> 30" in sec
    assert "Not validated on Warp 1.18.0: `defects4warp maint pages --measure --warp 1.18.0` validates it." in sec
    assert "spread inf" not in text and "not estimated" not in sec  # 3 variants timed on both: a noise estimate


def _validation(release, checks, wall_s):
    return {"device": "cpu", "machine": {"cpu": "Test CPU", "cores": 2}, "measured_on": "2026-12-01", "wall_s": wall_s,
            "releases": {release: {"wall_s": wall_s, "checks": checks}}}


def _check(case, variant, err, ratio=None, scale="small", program=None):
    """A validation check with the oracle's measurement (``err`` None: autodiff agrees); see test_matrix."""
    from test_matrix import oracle_check

    return oracle_check(case, err, ratio, variant=variant, scale=scale, program=program)


def _validated_pair(root):
    """The engine files of :func:`_two_releases` (plus a production-scale and a script run whose answers
    change) with the only validation files of ``root``: 1.18.0 (60 s, 3 checks) and 1.19.0 (90 s, 3 checks)."""
    for p in validation_files(root):
        p.unlink()
    _two_releases(root)
    for rel, evals, top in (("1.18.0", 50, "overwrite"), ("1.19.0", 48, "double_count")):
        doc = engine_matrix.read(engine_matrix.data_path(root, rel))
        prod = _rec("alpha", "buggy", BUG, "bug", [(top, 0.7)], wall=2.0, evals=evals)
        prod["scale"] = "production"
        script = _rec("delta", "buggy", BUG, "bug", [(top, 0.7)], wall=2.0)
        script["program"] = "script"
        doc["runs"] += [engine_matrix.compact_record(prod), engine_matrix.compact_record(script)]
        doc["corpus"]["runs"] = len(doc["runs"])
        engine_matrix.write(engine_matrix.data_path(root, rel), doc)
    data = root / "docs" / "data"
    (data / "validation-1.18.0.json").write_text(json.dumps(_validation("1.18.0", [
        _check("alpha", "buggy", 900.0, 42.0), _check("alpha", "buggy", 2.7e36, 3.7e11, scale="production"),
        _check("delta", "buggy", 1.0, 2.0, program="script")], 60.0)))
    (data / "validation-1.19.0.json").write_text(json.dumps(_validation("1.19.0", [
        _check("alpha", "buggy", 2.0, 2.0), _check("alpha", "buggy", 17.0, 2.19, scale="production"),
        _check("delta", "buggy", None, program="script")], 90.0)))


def test_upgrade_audit_error_size_scale_and_costs(tmp_path, monkeypatch):
    """The newcomer's findings on the page: bugs whose error changes size, the scale and script labels on every
    line, the same section titles as the audit verb, and the measured cost where data is missing."""
    from defects4warp.run.matrix import SECTIONS

    monkeypatch.setattr(upgrade_audit, "COST_MIN_MEASURED", 1)  # the fixture's files measure 3 to 4 runs

    root = _root(tmp_path)
    _validated_pair(root)
    text = render_upgrade_audit(root)
    assert "| 1.18.0 -> 1.19.0 | 1 | 2 | 5 verdict/class, 1 tracker, 3 cost | 0 |" in text
    sec = text.split("## Warp 1.18.0 -> 1.19.0")[1]
    assert "- delta/buggy (script): bug disappeared (wrong 1 r=2 -> agrees 1e-10)" in sec
    es = sec.split(f"### {SECTIONS['error_size_changes']} (2)")[1].split("###")[0]
    assert es.index("- alpha/buggy @production: wrong 2.7e+36 r=3.7e+11 -> wrong 17 r=2.19 (x1.59e+35)") \
        < es.index("- alpha/buggy: wrong 9e+02 r=42 -> wrong 2 r=2 (x450)")
    assert "- alpha/buggy @production: bug overwrite -> bug double_count (right -> wrong)" in sec
    assert "- alpha/buggy @production: objective evaluations 50 -> 48" in sec
    assert "- delta/buggy (script): bug overwrite -> bug double_count (right -> wrong)" in sec
    # one name per section, in the page and in `defects4warp audit`
    titles = [line[4:].rsplit(" (", 1)[0] for line in sec.split("## Warp")[0].splitlines() if line.startswith("### ")]
    assert titles == [SECTIONS[k] for k in ("truth_changes", "error_size_changes", "verdict_flips", "probe_changes",
                                            "cost_changes", "contradictions", "builtins")]
    # costs measured in the committed files, and the audit verb for pairs the data does not cover
    assert ("| 1.18.0 | 1.0 min | 3 of 3 | 0.5 min | 0.7 min | 4 of 6 | 1 |\n"
            "| 1.19.0 | 1.5 min | 3 of 3 | 0.5 min | 0.7 min | 4 of 7 | 1 |\n\nAt the median of these rates per measured "
            "run (releases with at least 1 measured runs), one variant costs about 32 s per release") in text
    pre = text.split("## Warp 1.17.0 -> 1.18.0")[1]
    # (the sentence is over 400 characters: the page wraps it, wrap_prose)
    assert " ".join(pre.split()).startswith("The committed data does not cover this pair. To compare the two releases on your own "
                          "corpus or a few cases, `defects4warp audit --warp 1.17.0,1.18.0 --cases GLOB` measures "
                          "both (about 65 s per variant for the two releases, at the rates above) and prints these "
                          "sections; `defects4warp maint pages --measure --warp 1.17.0` measures the whole corpus into this "
                          "page (about 2 min: ")  # 75 s (median validation) + 49 s (engine run: 7.5 s x 6.5 runs)
    assert "Needs the oracle's measurement on both releases (not validated on Warp 1.17.0)." in pre.split("## Warp")[0]
    assert "The committed data does not cover" not in sec
    assert f"### {SECTIONS['contradictions']} (0)\n\nNot validated on Warp 1.17.0: only the other release is " \
           "checked.\n\nNone." in pre
    assert f"### {SECTIONS['contradictions']}\n\nNeither release is validated." in text.split("## Warp 1.16.0 -> ")[1]


def test_costs_count_measured_runs_not_reused_ones(tmp_path):
    """A file assembled from the result store records the wall time of what it measured only: its rate is per
    measured run (not reused, not skipped), a release with too few measured runs gives no rate (it said 0.1 min
    for 321 checks), and a release validated in two files counts its corpus once."""
    data = tmp_path / "docs" / "data"
    data.mkdir(parents=True)

    def checks(n, skipped=0):
        return [{"case": f"c{i}", "variant": "buggy", "status": "skipped" if i < skipped else "passed"}
                for i in range(n)]

    (data / "validation-1.1.0.json").write_text(json.dumps(
        {"releases": {"1.1.0": {"wall_s": 6.0, "reused": 99, "checks": checks(100, skipped=1)}}}))
    (data / "validation-1.2.2.json").write_text(json.dumps(  # 20 measured: 30 s each (5 skipped, 75 reused)
        {"releases": {"1.2.2": {"wall_s": 600.0, "reused": 75, "checks": checks(100, skipped=5)}}}))
    (data / "oracle-validation-1.2.2.json").write_text(json.dumps(  # an older file of the same release
        {"releases": {"1.2.2": {"wall_s": 300.0, "reused": 0, "checks": checks(10)}}}))
    docs = {"1.1.0": {"wall_s": 60.0, "cpu_s": 90.0, "jobs": 2, "measured": 30, "reused": 60, "corpus": {"runs": 100}},
            "1.2.2": {"wall_s": 400.0, "cpu_s": 700.0, "jobs": 2, "corpus": {"runs": 100}},  # none reused
            "1.3.3": {"wall_s": 30.0, "jobs": 2, "measured": 3, "reused": 97, "corpus": {"runs": 100}}}
    costs = measurement_costs(tmp_path, docs)
    assert costs["validation"] == [("1.1.0", 6.0, 100, 0), ("1.2.2", 900.0, 100, 30)]
    assert costs["engine"] == [("1.1.0", 60.0, 90.0, 100, 2, 30), ("1.2.2", 400.0, 700.0, 100, 2, 100),
                               ("1.3.3", 30.0, None, 100, 2, 3)]
    assert costs["validation_release_s"] == 3000.0  # 1.2.2 alone: 900 s / 30 measured x 100 checks
    assert costs["engine_release_s"] == 300.0  # median of 2 s x 100 and 4 s x 100; 1.3.3 has 3 measured runs
    assert costs["per_variant_s"] == 33.0  # 30 + median(2, 4)
    assert costs["per_release_s"] == 3300.0
    text = _costs_paragraph(costs)
    # one row per release (was one paragraph of 4,659 characters on the committed page)
    assert "| 1.1.0 | 0.1 min | 0 of 100 | 1.0 min | 1.5 min | 30 of 100 | 2 |" in text
    assert "| 1.2.2 | 15.0 min | 30 of 100 | 6.7 min | 11.7 min | 100 of 100 | 2 |" in text
    assert "| 1.3.3 | - | - | 0.5 min | - | 3 of 100 | 2 |" in text
    assert ("releases with at least 20 measured runs), one variant costs about 33 s per release (validation and "
            "engine run) and the whole corpus about 55 min") in text
    assert measurement_costs(tmp_path, docs, min_measured=1)["engine_release_s"] == 400.0  # 1.3.3: 1000


def test_noise_sentence_says_what_is_meant():
    few = answer_changes({("a", "v", "small"): {"top": "bug x", "wall_s": 1.0}},
                         {("a", "v", "small"): {"top": "bug x", "wall_s": 9.0}})
    assert few["noise"]["log_ratio_spread"] is None and few["cost_changes"] == []
    assert noise_sentence(few["noise"]).startswith("Run-to-run noise of wall times: not estimated (it needs at least "
                                                   "3 variants timed on both releases; 1 are)")
    da = {(c, "v", "small"): {"top": "t", "wall_s": 1.0} for c in "abcd"}
    db = {(c, "v", "small"): {"top": "t", "wall_s": w} for c, w in zip("abcd", (1.1, 1.0, 0.9, 5.0))}
    ch = answer_changes(da, db)
    assert ch["noise"]["timed"] == 4 and ch["noise"]["log_ratio_spread"] > 0
    assert [c["case"] for c in ch["cost_changes"]] == ["d"]
    assert "over the 4 variants timed on both releases" in noise_sentence(ch["noise"])


def test_results_block_from_newest_engine_file_keeps_hand_written_sections(tmp_path):
    root = _root(tmp_path)
    before = (root / "docs" / "results.md").read_text()
    hand = before.split(RESULTS_END)[1]
    assert "## Dev and test splits, and the baselines" in hand
    _two_releases(root)
    text = render_results(root)
    assert text.split(RESULTS_END)[1] == hand
    block = text.split(RESULTS_START)[1].split(RESULTS_END)[0]
    assert "from `docs/data/engine-1.19.0.json`" in block and "Warp 1.19.0" in block
    assert "| class accuracy (top-1 in the expected classes) | 1.000 |" in block
    assert "| test | 2 | 1.000 | 1.000 | 1.000 | 0.000 |" in block
    (root / "docs" / "results.md").write_text(before.replace(RESULTS_START, ""))

    with pytest.raises(PageSourceError, match="docs/results.md: no <!-- pages:engine-results:start -->"):
        render_results(root)


def test_write_then_check_with_engine_files(tmp_path):
    root = _root(tmp_path)
    write_pages(root)  # the pages as they render without engine files
    assert check_pages(root) == []
    _two_releases(root)
    assert set(check_pages(root)) == {"docs/release-matrix.md", "docs/upgrade-audit.md", "docs/results.md",
                                            "docs/engines.md"}
    write_pages(root)
    assert check_pages(root) == []
    assert unmeasured_releases(["1.18.0", "1.19.0", "1.9.1"], root) == ["1.9.1"]


def test_measure_order():
    assert measure_order(["1.0.2", "1.9.1", "1.12.1", "1.19.0", "1.13.0", "1.11.1"]) == \
        ["1.12.1", "1.13.0", "1.19.0", "1.11.1", "1.9.1", "1.0.2"]


def _tiny_measure_setup(tmp_path):
    """(installed release, a root to render into, the tiny corpus's cases, an empty result store)."""
    from defects4warp.corpus.case import load_corpus
    from defects4warp.envs import installed_warp_version
    from defects4warp.run.store import ResultStore

    from tiny_corpus import make_tiny_corpus

    cases, errors = load_corpus(make_tiny_corpus(tmp_path / "corpus"))
    assert not errors
    return installed_warp_version(), _root(tmp_path / "repo"), cases, ResultStore(tmp_path / "store")


def test_measure_writes_engine_file_then_keeps_it_and_reuses_the_store(tmp_path):
    """The whole --measure path with a constant engine on the tiny corpus (no Warp program runs)."""
    rel, root, cases, store = _tiny_measure_setup(tmp_path)
    logs = []
    done = measure(cases, [rel], root, engine_name="always-bug", store=store, validate=False, log=logs.append)
    assert done == [(rel, "engine")]
    doc = engine_matrix.read(engine_matrix.data_path(root, rel))
    assert doc["complete"] and doc["engine"]["name"] == "always-bug" and doc["measured"] == 3
    assert [(r["case"], r["verdict"], r["correct"]["verdict"]) for r in doc["runs"]] == [
        ("tiny-cubic", "bug", False), ("tiny-factor-two", "bug", True), ("tiny-growth", "bug", True)]
    assert measure(cases, [rel], root, engine_name="always-bug", store=store, validate=False,
                         log=logs.append) == []
    assert "is current" in logs[-1]
    # one case fewer: the corpus digest moves, the release is measured again from the store
    done = measure(cases[:2], [rel], root, engine_name="always-bug", store=store, validate=False,
                         log=logs.append)
    assert done == [(rel, "engine")] and "corpus" in logs[-2]
    doc = engine_matrix.read(engine_matrix.data_path(root, rel))
    assert len(doc["runs"]) == 2 and doc["reused"] == 2 and doc["measured"] == 0
    write_pages(root)
    assert check_pages(root) == []
    text = (root / "docs" / "release-matrix.md").read_text()
    assert "| tiny-factor-two | main | bug double_count | bug overwrite x |" in text


def _baseline(root, name, recs, code):
    doc = _doc("1.19.0", recs)
    doc["engine"] = {"name": name, "version": "0.1.0", "code": code}
    engine_matrix.write(baseline_path(root, name, "1.19.0"), doc)


def test_engines_comparison_block_from_reference_and_baseline_files(tmp_path):
    """docs/engines.md's comparison: the reference engine's file and each baseline's, per split, the missing
    ones named with the command that measures them, an older engine code said, the reference per family."""
    from defects4warp.run.store import code_digest

    root = _root(tmp_path)
    _two_releases(root)
    _baseline(root, "fd-only", [_rec("alpha", "buggy", BUG, "bug", [("overwrite", 0.5)], wall=0.5, evals=18),
                                _rec("alpha", "fixed", OK, "bug", [("fd_precision", 0.5)], wall=0.5, evals=18),
                                _rec("beta", "buggy", BUG, "bug", [("missing_tape_zero", 0.5)], split="test"),
                                _rec("beta", "fixed", OK, "no_bug", [("correct", 1.0)], split="test")],
              code_digest()[:16])
    _baseline(root, "always-bug", [_rec("alpha", "fixed", OK, "bug", [("overwrite", 1.0)], wall=0.0, evals=0)],
              "0123456789abcdef")
    block = engines_measured_block(root)
    assert "| `reference` | dev | 2 | 1.000 | 1.000 | 1.000 | 0.000 | 0 | 2.05 | 20 |" in block
    assert "| `reference` | test | 2 | 1.000 | 1.000 | 1.000 | 0.000 | 0 | 2.00 | 10 |" in block
    # fd-only: dev verdicts 1/2 (a false positive on alpha/fixed), classes 1/2; test classes 1/2
    assert "| `fd-only` | dev | 2 | 0.500 | 0.500 | 1.000 | 1.000 | 0 | 0.50 | 18 |" in block
    assert "| `fd-only` | test | 2 | 1.000 | 0.500 | 1.000 | 0.000 | 0 | 1.00 | 10 |" in block
    assert "| `always-bug` | dev | 1 | 0.000 | 0.000 | - | 1.000 | 0 | 0.00 | 0 |" in block
    assert "| `tracker-only` | not measured |" in block and "| `warp-gradcheck` | not measured |" in block
    assert ("Not measured on Warp 1.19.0: `warp-gradcheck`, `tracker-only`, `static-only`, `always-no-bug` "
            "(`defects4warp maint pages --measure --baselines`).") in block
    assert ("Measured on device `cpu` of Test CPU, 2 cores, 8.0 GiB, Linux, Python 3.11: `reference` (2026-12-01, "
            f"1 job, measured with engine code 0123456789abcdef, not this checkout's {code_digest()[:16]}), `fd-only` "
            "(2026-12-01, 1 job), `always-bug` (2026-12-01, 1 job, measured with engine code") in block
    assert block.count("measured with engine code") == 2  # the reference file's code is 0123..., fd-only's is now
    # the reference per family: taping (overwrite) 1 dev + 1 test, not_a_bug (correct) 1 + 1
    assert "| taping | 1 | 1.000 | 1 | 1.000 |" in block and "| not_a_bug | 1 | 1.000 | 1 | 1.000 |" in block
    assert "subset" not in block and "incomplete" not in block
    assert "| warp | 0 | - | 0 | - |" in block
    page = render_engines(root)
    assert wrap_prose(block).strip() in page and "<!-- rules-table -->" in page  # long prose wrapped
    # a subset or a cut-short measurement is said
    doc = json.loads(baseline_path(root, "always-bug", "1.19.0").read_text())
    doc["corpus"]["selection"], doc["complete"] = "alpha*", False
    baseline_path(root, "always-bug", "1.19.0").write_text(json.dumps(doc))
    assert ", a subset of the corpus only (`--cases alpha*`), incomplete (the measurement was cut short))" in \
        engines_measured_block(root)
    # a file whose name says another engine is an error naming the file
    (root / "docs" / "data" / "baselines" / "fd-only-1.19.0.json").rename(
        root / "docs" / "data" / "baselines" / "static-only-1.19.0.json")
    with pytest.raises(PageSourceError, match="static-only-1.19.0.json: holds engine 'fd-only'"):
        baseline_docs(root)


def test_measure_baselines_writes_each_engine_file_then_keeps_it(tmp_path):
    rel, root, cases, store = _tiny_measure_setup(tmp_path)
    logs = []
    kw = dict(release=rel, engines=("always-bug", "always-no-bug"), store=store, log=logs.append)
    assert measure_baselines(cases, root, **kw) == ["always-bug", "always-no-bug"]
    docs = baseline_docs(root)
    assert sorted(docs) == [("always-bug", rel), ("always-no-bug", rel)]
    assert [r["verdict"] for r in docs[("always-no-bug", rel)]["runs"]] == ["no_bug"] * 3
    assert measure_baselines(cases, root, **kw) == []
    assert "is current" in logs[-1]


def test_pages_verb_root_and_usage_errors(tmp_path):
    root = _root(tmp_path)
    _two_releases(root)
    res = CliRunner().invoke(main, ["maint", "pages", "--check", "--root", str(root), "--warp", "1.18.0,1.19.0,1.17.0"])
    assert res.exit_code == 1, res.output
    assert "docs/release-matrix.md: DIFFERS" in res.output and "docs/version-matrix.md: matches" in res.output
    assert "no engine file for Warp 1.17.0 (`defects4warp maint pages --measure --warp 1.17.0`)" in res.output
    res = CliRunner().invoke(main, ["maint", "pages", "--root", str(root)])
    assert res.exit_code == 0 and "docs/release-matrix.md: rewritten" in res.output
    assert CliRunner().invoke(main, ["maint", "pages", "--check", "--root", str(root)]).exit_code == 0
    res = CliRunner().invoke(main, ["maint", "pages", "--cases", "alpha*"])
    assert res.exit_code == 2 and "give one" in res.output and "--rescore" in res.output
    res = CliRunner().invoke(main, ["maint", "pages", "--check", "--measure"])
    assert res.exit_code == 2 and "cannot be combined" in res.output
    res = CliRunner().invoke(main, ["maint", "pages", "--baselines"])
    assert res.exit_code == 2 and "give --measure too" in res.output
    for extra in (["--warp", "1.18.0"], ["--no-validate"]):
        res = CliRunner().invoke(main, ["maint", "pages", "--measure", "--baselines"] + extra)
        assert res.exit_code == 2 and "on 1.19.0 only" in res.output, extra
    (root / "docs" / "data" / "engine-1.19.0.json").write_text("{}")
    res = CliRunner().invoke(main, ["maint", "pages", "--check", "--root", str(root)])
    assert res.exit_code == 1 and "engine-1.19.0.json: no 'format' field" in res.output


def test_rescore_joins_todays_labels_and_min_warp():
    """Runs are scored against the labels case.yaml gives now: a label corrected after the
    measurement flips the run's correctness, and a run below a min_warp set since is
    unsupported (not a harness error); unknown cases are kept as measured."""
    from defects4warp.corpus.case import default_corpus, load_corpus

    cases = {}
    for pat in ("arm-batch-reach-targets", "warp-example-cantilever-topology"):
        got, errors = load_corpus(default_corpus(), pat)
        assert not errors
        cases.update({c.id: c for c in got})
    assert cases["warp-example-cantilever-topology"].variants[0].min_warp == "1.18.0"
    stale_label = {"verdict": "no_bug", "classes": ["correct"]}
    doc = _doc("1.12.1", [
        _rec("arm-batch-reach-targets", "buggy", stale_label, "bug", [("overwrite", 0.9)]),
        _rec("warp-example-cantilever-topology", "program", BUG, "error", [], error="load failed: ModuleNotFoundError"),
        _rec("alpha", "buggy", BUG, "bug", [("double_count", 0.9)]),
    ])
    assert [r["correct"] for r in doc["runs"]] == [{"verdict": False, "class": False}, {"verdict": False, "class": False},
                                                   {"verdict": True, "class": False}]
    out = engine_matrix.rescore(doc, cases)
    arm, cant, alpha = out["runs"]
    # arm-batch-reach-targets/buggy is labelled bug overwrite on Warp 1.12.1 (before the 1.13.0 adjoint change)
    assert arm["expected"] == {"verdict": "bug", "classes": ["overwrite"]}
    assert arm["correct"] == {"verdict": True, "class": True}
    assert cant["unsupported"] and cant["verdict"] == "skipped" and "error" not in cant and cant["correct"] is None
    assert "1.18.0" in cant["skipped"]
    assert alpha == doc["runs"][2] and out["rescored"] == 2
    assert answer_cell(cant) == "unsup"
    s = _summary(out["runs"])
    assert s["errors"] == 0 and s["unsupported"] == 1


def test_check_shows_the_first_differing_lines(tmp_path):
    """`pages --check` prints, under each page that DIFFERS, the start of a unified diff (committed -> generated),
    cut at 20 lines with the count of the rest (a newcomer saw DIFFERS and nothing of the difference)."""
    _fixed_docs(tmp_path)
    vm = tmp_path / "docs" / "version-matrix.md"
    good = vm.read_text()
    row = next(ln for ln in good.splitlines() if ln.startswith("| fountain-jet-aiming | buggy |"))
    vm.write_text(good.replace(row, row.replace("| buggy |", "| buggy2 |")))
    diffs = {}
    assert check_pages(tmp_path, diffs=diffs) == ["docs/version-matrix.md"]
    d = diffs["docs/version-matrix.md"]
    assert d[:2] == ["--- committed/docs/version-matrix.md", "+++ generated/docs/version-matrix.md"]
    assert d[2].startswith("@@ ")
    assert [ln for ln in d if ln[:1] in "+-" and ln[:3] not in ("---", "+++")] == \
        ["-" + row.replace("| buggy |", "| buggy2 |"), "+" + row]
    assert len(d) == 2 + 1 + 3 + 2 + 3  # headers, hunk, context, the change, context

    # a long difference is cut at max_lines with the count of the rest
    lines = good.splitlines()
    vm.write_text("\n".join(ln + " x" if ln.startswith("| ") else ln for ln in lines) + "\n")
    diffs = {}
    check_pages(tmp_path, diffs=diffs)
    full = sum(1 for ln in lines if ln.startswith("| "))
    d = diffs["docs/version-matrix.md"]
    assert len(d) == 21 and d[-1].startswith("... ") and d[-1].endswith(" more lines")
    assert int(d[-1].split()[1]) > 2 * full - 20 > 0

    res = CliRunner().invoke(main, ["maint", "pages", "--check", "--root", str(tmp_path), "--warp", "1.12.1,1.19.0"])
    assert res.exit_code == 1
    out = res.output.splitlines()
    at = out.index(next(ln for ln in out if ln.startswith("docs/version-matrix.md: DIFFERS from")))
    assert out[at + 1] == "    --- committed/docs/version-matrix.md"
    assert out[at + 21].startswith("    ... ") and out[at + 21].endswith(" more lines")
    assert out[at + 22].startswith("docs/release-matrix.md: matches")
