"""Release matrix and upgrade audit on synthetic documents with known differences."""

from defects4warp.matrix import audit, audit_markdown, matrix_markdown


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
    assert "## Ground truth that changed (1)" in md and "c1/buggy: bug disappeared (wrong 1 -> right)" in md


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
