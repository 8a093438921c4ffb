"""Release matrix and upgrade audit on synthetic documents with known differences."""

import json

import pytest
from click.testing import CliRunner

from defects4warp.run.matrix import SECTIONS, audit, audit_markdown, error_size_changes, matrix_markdown


def check(case, sig, err, ok=True, variant="buggy"):
    return {"case": case, "variant": variant, "scale": "small", "signature": sig, "relative_error": err, "ok": ok,
            "expected": {"verdict": "bug", "classes": ["copy_adjoint"]}, "message": "m"}


def result(case, verdict, cls, wall, evals=30, warnings=None, correct=True):
    ev = [{"probe": "tracker", "clean": not warnings, "finding": "t", "data": warnings}] if warnings else []
    return {"case": case, "variant": "buggy", "scale": "small",
            "diagnosis": {"verdict": verdict, "classes": [{"id": cls, "score": 1.0}], "evidence": ev,
                          "cost": {"wall_s": wall, "objective_evals": evals}},
            "correct": {"verdict": correct, "class": correct}}


def release(checks, results, version):
    return {"warp_version": version, "wall_s": 60.0, "validation": checks,
            "run": {"summary": {"engine": "reference", "engine_version": "0", "device": "cpu", "verdict_accuracy": 1.0,
                                "class_accuracy": 1.0, "detection_rate": 1.0, "false_positive_rate": 0.0},
                    "results": results}}


def doc():
    w = [{"arg": "x_out", "kernel": "step", "sites": ["p.py:5"]}]
    a = release([check("c1", "zero", 1.0), check("c2", "subtly_wrong", 0.4)] + [check(f"n{i}", "agrees", 1e-10) for i in range(5)],
                [result("c1", "bug", "copy_adjoint", 3.0), result("c2", "bug", "overwrite", 3.0, warnings=w)]
                + [result(f"n{i}", "no_bug", "correct", 3.0 + 0.01 * i) for i in range(5)], "1.16.0")
    b = release([check("c1", "agrees", 1e-10), check("c2", "subtly_wrong", 0.4, ok=False)] + [check(f"n{i}", "agrees", 1e-10) for i in range(5)],
                [result("c1", "no_bug", "correct", 3.1), result("c2", "bug", "overwrite", 30.0, evals=44, warnings=[])]
                + [result(f"n{i}", "no_bug", "correct", 3.05 + 0.01 * i) for i in range(5)], "1.19.0")
    return {"wall_s": 120.0, "releases": {"1.16.0": a, "1.19.0": b}}


def test_audit_finds_each_kind_of_change():
    rep = audit(doc(), "1.16.0", "1.19.0")
    assert [(t["case"], t["change"]) for t in rep["truth_changes"]] == [("c1", "bug disappeared")]
    assert [(f["case"], f["from"], f["to"]) for f in rep["verdict_flips"]] == [("c1", "bug copy_adjoint", "no_bug correct")]
    assert [(p["case"], p["change"]) for p in rep["probe_changes"]] == [("c2", "disappeared")]
    assert [c["case"] for c in rep["cost_changes"]] == ["c2"]
    assert "objective evaluations 30 -> 44" in rep["cost_changes"][0]["change"]
    assert [(c["release"], c["case"]) for c in rep["contradictions"]] == [("1.19.0", "c2")]
    md = audit_markdown(rep)
    assert "## Ground truth that changes (1)" in md and "c1/buggy: bug disappeared (wrong 1 -> right)" in md


def test_matrix_table_marks_wrong_answers():
    d = doc()
    d["releases"]["1.19.0"]["run"]["results"][0]["correct"] = {"verdict": False, "class": False}
    md = matrix_markdown(d)
    assert "| c1 | buggy | wrong 1 / bug copy_adjoint | right / no_bug correct ! |" in md


def test_audit_of_two_variants_says_the_noise_was_not_estimated():
    """With fewer than 3 variants timed on both releases there is no noise estimate: the audit says so
    instead of printing 'spread inf' (a newcomer's finding), and judges no wall time."""
    d = doc()
    for rel in d["releases"].values():
        rel["validation"] = rel["validation"][:2]
        rel["run"]["results"] = rel["run"]["results"][:2]
    rep = audit(d, "1.16.0", "1.19.0")
    assert rep["noise"]["log_ratio_spread"] is None and rep["noise"]["timed"] == 2
    assert [c["change"] for c in rep["cost_changes"]] == ["objective evaluations 30 -> 44"]  # no wall 3.0 -> 30.0
    md = audit_markdown(rep)
    assert "inf" not in md.replace("information", "")
    assert "Run-to-run noise of wall times: not estimated (it needs at least 3 variants timed on both releases; " \
           "2 are), so no wall-time change is reported" in md


def oracle_check(case, err, ratio, variant="buggy", scale="small", kind="other", program=None):
    """A validation check with the oracle's measurement: wrong with relative error ``err`` (None: agrees)."""
    c = {"case": case, "variant": variant, "scale": scale, "ok": True, "status": "passed", "message": "m",
         "expected": {"verdict": "bug", "classes": ["overwrite"]}, "signature": "subtly_wrong",
         "relative_error": err,
         "oracle": {"verdict": "agrees" if err is None else "wrong",
                    "signature": {"kind": "none" if err is None else kind},
                    "max_relative_error": 1e-10 if err is None else err}}
    if ratio is not None:
        c["pair"] = {"ratio_median": ratio}
    if program:
        c["program"] = program
    return c


def upgrade_doc():
    """Two releases of a user's corpus, as the newcomer's audit saw them: a bug whose error shrinks from
    9e+02 (r=42) to 2 (r=2), one that only grows 3x, one whose NaN gradient becomes finite, one whose
    growth ratio alone changes 30x; a production-scale run and a script program whose answers change; a
    case whose label changes with the release and one the engine got wrong on the older release."""
    a = [oracle_check("shrinks", 900.0, 42.0), oracle_check("grows3", 1.0, 2.0),
         oracle_check("nanfix", float("nan"), None, kind="nan"),
         oracle_check("ratio", 1.0, 0.9), oracle_check("arm", 1.7e25, 1.5e16, scale="production"),
         oracle_check("old", 5.0, None)]
    a[2]["oracle"]["max_relative_error"] = "inf"
    a[5].pop("oracle")  # checked before the oracle: no measurement to compare
    b = [oracle_check("shrinks", 2.0, 2.0), oracle_check("grows3", 3.0, 6.0), oracle_check("nanfix", 4.0, 1.5),
         oracle_check("ratio", 1.5, 0.03), oracle_check("arm", 1.1e9, 1.0, scale="production"),
         oracle_check("old", 5000.0, None)]
    ra = [result("shrinks", "bug", "overwrite", 3.0, correct=False), result("arm", "bug", "overwrite", 3.0, evals=50),
          result("arm", "bug", "overwrite", 3.0, evals=48), result("canoe", "bug", "warp_adjoint_bug", 3.0),
          result("script", "bug", "overwrite", 3.0, warnings=[{"arg": "x", "kernel": "k", "sites": ["s.py:1"]}]),
          result("slip", "bug", "overwrite", 3.0)]
    rb = [result("shrinks", "bug", "copy_adjoint", 3.0), result("arm", "no_bug", "correct", 3.0, evals=48),
          result("arm", "bug", "overwrite", 3.0, evals=24), result("canoe", "no_bug", "correct", 3.0),
          result("script", "bug", "double_count", 3.0, warnings=[]),
          result("slip", "bug", "copy_adjoint", 3.0, correct=False)]
    for runs in (ra, rb):
        runs[1]["scale"] = "production"
        runs[4]["program"] = "script"
        runs[3]["expected"] = {"verdict": "bug", "classes": ["warp_adjoint_bug"]}
    rb[3]["expected"] = {"verdict": "no_bug", "classes": ["correct"]}
    return {"wall_s": 1.0, "releases": {"1.9.1": release(a, ra, "1.9.1"), "1.19.0": release(b, rb, "1.19.0")}}


def test_audit_judges_both_releases_and_names_scale_and_script():
    md = audit_markdown(audit(upgrade_doc(), "1.9.1", "1.19.0"))
    sec = md.split(f"## {SECTIONS['verdict_flips']}")[1].split("\n## ")[0]
    assert "- shrinks/buggy: bug overwrite -> bug copy_adjoint (wrong -> right)" in sec
    assert "- slip/buggy: bug overwrite -> bug copy_adjoint (right -> wrong)" in sec
    assert "- arm/buggy @production: bug overwrite -> no_bug correct (right -> right)" in sec
    assert "- canoe/buggy: bug warp_adjoint_bug -> no_bug correct (right -> right: the label changed, " \
           "bug warp_adjoint_bug -> no_bug correct)" in sec
    assert "now right" not in md
    assert "- arm/buggy @production: objective evaluations 50 -> 48" in md
    assert "- arm/buggy: objective evaluations 48 -> 24" in md
    assert "- script/buggy (script): x in kernel k disappeared" in md
    assert "- script/buggy (script): bug overwrite -> bug double_count (right -> right)" in md


def test_audit_lists_bugs_whose_error_changes_size():
    rep = audit(upgrade_doc(), "1.9.1", "1.19.0")
    assert rep["truth_changes"] == []  # wrong on both releases everywhere: the old section saw nothing
    got = [(r["case"], r["variant"], r["scale"], r["factor"]) for r in rep["error_size_changes"]]
    assert got == [("nanfix", "buggy", "small", float("inf")),
                   ("arm", "buggy", "production", pytest.approx(1.7e25 / 1.1e9)),
                   ("shrinks", "buggy", "small", pytest.approx(450.0)),
                   ("ratio", "buggy", "small", pytest.approx(30.0))]
    md = audit_markdown(rep)
    sec = md.split(f"## {SECTIONS['error_size_changes']} (4)")[1].split("\n## ")[0]
    assert "changes by more than 10x" in sec
    order = [sec.index(x) for x in ("- nanfix/", "- arm/buggy @production", "- shrinks/", "- ratio/")]
    assert order == sorted(order)
    assert "- shrinks/buggy: wrong 9e+02 r=42 -> wrong 2 r=2 (x450)" in sec
    assert "- arm/buggy @production: wrong 1.7e+25 r=1.5e+16 -> wrong 1.1e+09 r=1 (x1.55e+16)" in sec
    assert "- nanfix/buggy: wrong nan -> wrong 4 r=1.5 (finite on one release only)" in sec
    assert "grows3" not in sec and "old/" not in sec  # 3x is below the factor; no oracle record, no number made up
    low = audit(upgrade_doc(), "1.9.1", "1.19.0", error_factor=2.0)["error_size_changes"]
    assert [r["case"] for r in low][-1] == "grows3"
    with pytest.raises(ValueError, match="factor must be above 1"):
        error_size_changes({}, {}, factor=1.0)


def test_audit_verb_prints_the_shared_sections(tmp_path):
    from defects4warp.cli import main

    path = tmp_path / "m.json"
    path.write_text(json.dumps(upgrade_doc()))
    res = CliRunner().invoke(main, ["audit", "--from", "1.9.1", "--to", "1.19.0", "--matrix", str(path),
                                    "--error-factor", "100", "--json", str(tmp_path / "a.json")])
    assert res.exit_code == 0, res.output
    titles = [line[3:].rsplit(" (", 1)[0] for line in res.output.splitlines() if line.startswith("## ")]
    assert titles == [SECTIONS[k] for k in ("truth_changes", "error_size_changes", "verdict_flips", "probe_changes",
                                            "cost_changes", "contradictions", "builtins")]
    assert "changes by more than 100x" in res.output and "- shrinks/buggy: wrong 9e+02" in res.output
    assert "- ratio/buggy" not in res.output  # 30x is under --error-factor 100
    rep = json.loads((tmp_path / "a.json").read_text())
    assert rep["error_factor"] == 100 and rep["error_size_changes"][0]["factor"] == "inf"
    # --warp FROM,TO is the primary spelling; --from/--to is the same audit
    res2 = CliRunner().invoke(main, ["audit", "--warp", "1.9.1,1.19.0", "--matrix", str(path),
                                     "--error-factor", "100", "--json", str(tmp_path / "b.json")])
    assert res2.exit_code == 0, res2.output
    assert json.loads((tmp_path / "b.json").read_text()) == rep


def test_matrix_totals_say_which_wall_time_they_are():
    """Releases measured at the same time: the whole matrix's wall time is the longest release's, and
    the text says so next to the sum (a newcomer read '0.7 + 0.9 min per release, 0.9 min in all')."""
    d = doc()
    d["releases"]["1.16.0"]["wall_s"], d["releases"]["1.19.0"]["wall_s"] = 42.0, 54.0
    d["releases"]["1.19.0"]["reused"] = 14
    d["wall_s"] = 54.0
    md = matrix_markdown(d)
    assert "the whole matrix took 0.9 min of wall time (the releases are measured at the same time, so this is " \
           "the longest release, not the sum of the per-release wall times, 1.6 min)." in md
    assert "| 1.16.0 | 1.000 | 1.000 | 1.000 | 0.000 | 0.7 min |" in md
    assert "| 1.19.0 | 1.000 | 1.000 | 1.000 | 0.000 | 0.9 min (14 result(s) reused from the result store) |" in md
    one = doc()
    del one["releases"]["1.19.0"]
    one["wall_s"] = 60.0
    assert "; the whole matrix took 1.0 min of wall time." in matrix_markdown(one)
